//! Markup that is safe by construction: a page is built only from
//! templates written in the source and from values that escape on the way
//! in, so no site can put a model's or a person's text on a page
//! unescaped.

use std::fmt::Display;

/// `text` with `&`, `<`, `>`, `"` and `'` escaped: safe in element content
/// and in quoted attribute values. Pages take text only through
/// [`Html::text`], which calls this.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// HTML that may go on a page as it is. Its only constructors escape
/// ([`Html::text`]), render safely ([`Html::markdown`]), format a number
/// ([`Html::number`], [`Html::decimal`]), or take markup written in the
/// source ([`Html::literal`], [`html!`](crate::html!), whose template must
/// be a string literal and whose values must themselves be `Html`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Html(String);

/// The numbers a page shows: formatting them can produce no markup.
pub trait Number: Display {}

macro_rules! numbers {
    ($($t:ty),*) => { $(impl Number for $t {})* };
}
numbers!(u8, u16, u32, u64, usize, i32, i64, f32, f64);

impl Html {
    /// Any text (a model's, a person's, an id): every character HTML or an
    /// attribute value would interpret is escaped.
    pub fn text(text: &str) -> Self {
        Self(escape(text))
    }

    /// Markdown a model or a person wrote, rendered with nothing that runs
    /// or loads ([`super::markdown`]).
    pub fn markdown(text: &str) -> Self {
        Self(super::markdown(text))
    }

    /// Markup written in the source.
    pub fn literal(markup: &'static str) -> Self {
        Self(markup.to_owned())
    }

    /// A number, as `Display` writes it.
    pub fn number(n: impl Number) -> Self {
        Self(n.to_string())
    }

    /// A number with `places` decimals.
    pub fn decimal(n: f64, places: usize) -> Self {
        Self(format!("{n:.places$}"))
    }

    /// `template` (markup written in the source) with each `{}` replaced,
    /// in order, by one of `values`; what [`html!`](crate::html!) expands
    /// to. A template with fewer placeholders than values drops the rest.
    pub fn fill(template: &'static str, values: &[&Html]) -> Self {
        let mut out =
            String::with_capacity(template.len() + values.iter().map(|v| v.0.len()).sum::<usize>());
        let mut values = values.iter();
        let mut rest = template;
        while let Some(at) = rest.find("{}") {
            out.push_str(&rest[..at]);
            if let Some(value) = values.next() {
                out.push_str(&value.0);
            }
            rest = &rest[at + 2..];
        }
        out.push_str(rest);
        debug_assert!(
            values.next().is_none(),
            "more values than `{{}}` in {template:?}"
        );
        Self(out)
    }

    /// Appends `other`.
    pub fn push(&mut self, other: Html) {
        self.0.push_str(&other.0);
    }

    /// Appends markup written in the source.
    pub fn push_literal(&mut self, markup: &'static str) {
        self.0.push_str(markup);
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The markup.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The markup, to serve.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl FromIterator<Html> for Html {
    fn from_iter<I: IntoIterator<Item = Html>>(iter: I) -> Self {
        let mut out = Html::default();
        for part in iter {
            out.push(part);
        }
        out
    }
}

/// Markup from a template written in the source and values that are
/// [`Html`] already: `html!("<p>{}</p>", Html::text(said))`. Text cannot be
/// passed unescaped: a `String` or a `&str` is not `Html`.
#[macro_export]
macro_rules! html {
    ($template:literal $(, $value:expr)* $(,)?) => {
        $crate::html::Html::fill($template, &[$(&$value),*])
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_and_templates_filled_in_order() {
        let said = "<script>alert(1)</script> & \"x\"";
        let page = crate::html!(
            "<p title=\"{}\">{}</p>{}",
            Html::text(said),
            Html::text("b"),
            Html::number(3_u32)
        );
        assert_eq!(
            page.as_str(),
            "<p title=\"&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;\">b</p>3"
        );
        assert_eq!(Html::decimal(1.25, 1).as_str(), "1.2");
        let list: Html = ["a", "<b>"]
            .iter()
            .map(|t| crate::html!("<li>{}</li>", Html::text(t)))
            .collect();
        assert_eq!(list.as_str(), "<li>a</li><li>&lt;b&gt;</li>");
        assert_eq!(
            crate::html!("css{a:b}{}", Html::literal("!")).as_str(),
            "css{a:b}!"
        );
    }
}
