//! What the commands show of a debate: the first line of its topic (its
//! view is [`agon_app::App::view`]).

/// The first non-empty line of a topic or problem (problems can be files).
pub(crate) fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}
