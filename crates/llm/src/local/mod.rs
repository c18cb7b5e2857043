//! In-process models (feature `local`): they make Agon run with no API key
//! and no network. Files come from the models directory; nothing is downloaded.

mod embedder;
pub mod files;

pub use embedder::{LocalEmbedder, MINILM_DIR};
