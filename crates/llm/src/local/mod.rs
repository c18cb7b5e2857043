//! In-process models (feature `local`): they make Agon run with no API key
//! and no network. Files come from the models directory; nothing is downloaded.

mod chat;
mod embedder;
pub mod files;
mod guidance;

pub use chat::{GenerationStats, LocalChat, SMOLLM2_FILE, default_chat_path};
pub use embedder::{LocalEmbedder, MINILM_DIR};
