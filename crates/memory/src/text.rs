//! Lexical analysis for BM25: lowercase words, English stop words removed,
//! Snowball (Porter 2) stems.

use rust_stemmers::{Algorithm, Stemmer};

/// Common English words that carry no retrieval signal.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "but", "by", "can", "could", "did", "do", "does",
    "doing", "for", "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my", "no", "nor",
    "not", "of", "on", "or", "our", "ours", "she", "so", "than", "that", "the", "their", "theirs",
    "them", "then", "there", "these", "they", "this", "those", "to", "too", "up", "us", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your", "yours",
];

/// Splits text into BM25 terms.
pub struct Analyzer {
    stemmer: Stemmer,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyzer(english)")
    }
}

impl Default for Analyzer {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

impl Analyzer {
    /// The terms of `text`, in order, duplicates kept.
    pub fn terms(&self, text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .filter(|w| STOP_WORDS.binary_search(&w.as_str()).is_err())
            .map(|w| self.stemmer.stem(&w).into_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn terms_are_lowercased_stemmed_and_filtered() {
        let a = Analyzer::default();
        assert_eq!(
            a.terms("The Cyclists were RIDING to Porto in 2024!"),
            vec!["cyclist", "ride", "porto", "2024"]
        );
        assert!(a.terms("  ... ").is_empty());
    }
}
