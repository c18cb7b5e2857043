//! Model text as a page shows it: its Markdown rendered (headings, lists,
//! emphasis, code, tables), and nothing of it able to run or to load
//! anything. Raw HTML in the text is shown as text, links keep only the
//! `http`, `https` and `mailto` schemes (any other, `javascript:` above
//! all, leaves its text without the link), and images are shown as links
//! to them, never loaded.

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// Whether a link target may be followed from the page.
fn safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
}

/// `text` (Markdown a model or a person wrote) as HTML that is safe in an
/// element's content: every character of the text is escaped, only
/// Markdown's own structure becomes markup.
pub fn markdown(text: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    // Links whose target is unsafe lose their tag (their text stays); an
    // image becomes a link to it (with its alt text), or its alt text.
    let mut dropped_links: Vec<bool> = Vec::new();
    let mut in_image: Vec<bool> = Vec::new();
    // Text is escaped here, with the page's own escaping (quotes too), and
    // handed on as markup: what a model wrote never reaches the output
    // unescaped, whatever the renderer does with text.
    let escaped = |text: &str| Event::InlineHtml(CowStr::from(super::escape(text)));
    let events = Parser::new_ext(text, options).filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) | Event::Text(raw) => Some(escaped(&raw)),
        Event::Code(code) => Some(Event::InlineHtml(CowStr::from(format!(
            "<code>{}</code>",
            super::escape(&code)
        )))),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let keep = safe_url(&dest_url);
            dropped_links.push(!keep);
            keep.then_some(Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }))
        }
        Event::End(TagEnd::Link) => {
            let dropped = dropped_links.pop().unwrap_or(true);
            (!dropped).then_some(Event::End(TagEnd::Link))
        }
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => {
            let keep = safe_url(&dest_url);
            in_image.push(keep);
            keep.then_some(Event::Start(Tag::Link {
                link_type: LinkType::Inline,
                dest_url,
                title,
                id,
            }))
        }
        Event::End(TagEnd::Image) => {
            let kept = in_image.pop().unwrap_or(false);
            kept.then_some(Event::End(TagEnd::Link))
        }
        Event::FootnoteReference(name) => Some(escaped(&format!("[^{name}]"))),
        other => Some(other),
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders_and_hostile_markdown_is_inert() {
        let html = markdown("### Plan\n\n* **one**\n* `two`\n\n| a | b |\n|---|---|\n| 1 | 2 |");
        assert!(html.contains("<h3>Plan</h3>"), "{html}");
        assert!(html.contains("<li><strong>one</strong></li>"), "{html}");
        assert!(html.contains("<code>two</code>"), "{html}");
        assert!(html.contains("<table>"), "{html}");

        let hostile = markdown(
            "<script>alert(1)</script>\n\nsee <img src=x onerror=alert(2)> and \
             [click](javascript:alert(3)) or [docs](https://example.org/a?b=1&c=\"d\") \
             ![pic](https://example.org/p.png) ![bad](data:image/png;base64,AAAA)",
        );
        assert!(!hostile.contains("<script"), "{hostile}");
        assert!(!hostile.contains("<img"), "{hostile}");
        assert!(
            hostile.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{hostile}"
        );
        assert!(!hostile.contains("javascript:"), "{hostile}");
        assert!(
            hostile.contains(" click "),
            "the unsafe link keeps its text: {hostile}"
        );
        let quoted = markdown("He said \"stop\" & left");
        assert_eq!(quoted, "<p>He said &quot;stop&quot; &amp; left</p>\n");
        assert!(
            hostile.contains("<a href=\"https://example.org/a?b=1&amp;c=%22d%22\">docs</a>"),
            "{hostile}"
        );
        assert!(
            hostile.contains("<a href=\"https://example.org/p.png\">pic</a>"),
            "an image is a link, never loaded: {hostile}"
        );
        assert!(!hostile.contains("data:image"), "{hostile}");
    }
}
