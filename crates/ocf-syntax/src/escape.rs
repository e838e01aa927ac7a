//! String literals: reading their escapes and writing a value back as a literal.
//!
//! A string is single- or double-quoted; the escapes are `\\ \' \" \n \t \r \u{HEX}`. The standard
//! printer always writes single quotes (catalogue §1.10: "Strings are printed quoted: single quotes").

use std::ops::Range;

/// A problem inside a string literal, at a byte range of the literal's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EscapeError {
    pub(crate) range: Range<usize>,
    pub(crate) message: String,
}

/// The length of the string literal at the start of `text` (which starts with a quote) and whether
/// it is closed. An unclosed string runs to the end of the text.
pub(crate) fn scan_string(text: &str) -> (usize, bool) {
    let bytes = text.as_bytes();
    let quote = bytes[0];
    let mut pos = 1;
    while pos < bytes.len() {
        match bytes[pos] {
            b'\\' => pos += 2,
            b if b == quote => return (pos + 1, true),
            _ => pos += 1,
        }
    }
    // Skipping the byte after a backslash may land inside a UTF-8 sequence, but the scan only stops at an
    // ASCII quote or at the end, so the length is always on a character boundary.
    (bytes.len(), false)
}

/// The value of a string literal (quotes included) and the problems with its escapes. A bad escape
/// is kept in the value as written, so a broken literal still has a readable value.
pub(crate) fn decode(literal: &str) -> (String, Vec<EscapeError>) {
    let mut value = String::with_capacity(literal.len());
    let mut errors = Vec::new();
    let Some(quote) = literal.chars().next() else {
        return (value, errors);
    };
    let body_end = if literal.len() >= 2 && literal.ends_with(quote) && !ends_with_escape(literal) {
        literal.len() - 1
    } else {
        literal.len()
    };
    let body = &literal[1..body_end];
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            value.push(c);
            continue;
        }
        let start = 1 + i;
        let Some((j, e)) = chars.next() else {
            errors.push(EscapeError {
                range: start..start + 1,
                message: "a `\\` at the end of a string escapes nothing".to_string(),
            });
            value.push('\\');
            break;
        };
        let simple = match e {
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            _ => None,
        };
        if let Some(s) = simple {
            value.push(s);
            continue;
        }
        if e == 'u' {
            // `\u{HEX}`: one to six hex digits naming a Unicode scalar value.
            let rest = &body[j + 1..];
            let closed = rest
                .strip_prefix('{')
                .and_then(|r| r.find('}').map(|end| &r[..end]));
            if let Some(hex) = closed {
                let len = 1 + 1 + hex.len() + 1; // `u{` hex `}`
                let escape_range = start..start + 1 + len;
                let ch = (!hex.is_empty()
                    && hex.len() <= 6
                    && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| u32::from_str_radix(hex, 16).ok())
                .flatten()
                .and_then(char::from_u32);
                // Skip the rest of the escape, one char at a time (all ASCII if valid).
                while chars.peek().is_some_and(|&(k, _)| 1 + k < escape_range.end) {
                    chars.next();
                }
                match ch {
                    Some(ch) => value.push(ch),
                    None => {
                        errors.push(EscapeError {
                            message: format!(
                                "`\\u{{{hex}}}` is not a Unicode character: write one to six hex digits"
                            ),
                            range: escape_range.clone(),
                        });
                        value.push_str(&literal[escape_range]);
                    }
                }
                continue;
            }
            errors.push(EscapeError {
                range: start..start + 2,
                message: "`\\u` needs a code in braces, as in `\\u{e9}`".to_string(),
            });
            value.push_str("\\u");
            continue;
        }
        let end = 1 + j + e.len_utf8();
        errors.push(EscapeError {
            range: start..end,
            message: format!(
                "unknown escape `{}` in a string: the escapes are \\\\ \\' \\\" \\n \\t \\r \\u{{...}}",
                &literal[start..end]
            ),
        });
        value.push_str(&literal[start..end]);
    }
    (value, errors)
}

/// Whether the literal's last quote is escaped (`'abc\'`), i.e. the literal is not closed.
fn ends_with_escape(literal: &str) -> bool {
    let before_quote = &literal.as_bytes()[1..literal.len() - 1];
    let backslashes = before_quote
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    backslashes % 2 == 1
}

/// `value` as a single-quoted string literal that reads back as `value`. Only `\` and `'` and
/// control characters are escaped; `"` never is.
pub fn quote_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_decode() {
        for (literal, value) in [
            ("''", ""),
            ("'arrows'", "arrows"),
            ("\"it's\"", "it's"),
            (r"'it\'s'", "it's"),
            (r"'a\\b'", r"a\b"),
            (r#"'say \"hi\"'"#, r#"say "hi""#),
            (r"'1\n2\t3\r'", "1\n2\t3\r"),
            (r"'caf\u{e9}'", "café"),
            (r"'\u{1F600}'", "\u{1F600}"),
        ] {
            let (decoded, errors) = decode(literal);
            assert_eq!((decoded.as_str(), errors), (value, vec![]), "{literal}");
        }
    }

    #[test]
    fn bad_escapes_are_reported_at_their_range() {
        for (literal, range, value) in [
            (r"'a\qb'", 2..4, r"a\qb"),
            (r"'\u{110000}'", 1..11, r"\u{110000}"),
            (r"'\u{}'", 1..5, r"\u{}"),
            (r"'\u41'", 1..3, r"\u41"),
            (r"'\é'", 1..4, r"\é"),
        ] {
            let (decoded, errors) = decode(literal);
            assert_eq!(decoded, value, "{literal}");
            assert_eq!(errors.len(), 1, "{literal}");
            assert_eq!(errors[0].range, range, "{literal}");
        }
    }

    #[test]
    fn scan_finds_the_closing_quote() {
        assert_eq!(scan_string("'ab' + 1"), (4, true));
        assert_eq!(scan_string(r"'a\'b' x"), (6, true));
        assert_eq!(scan_string(r#""a'b""#), (5, true));
        assert_eq!(scan_string("'abc"), (4, false));
        assert_eq!(scan_string(r"'abc\'"), (6, false));
        assert_eq!(scan_string(r"'abc\"), (5, false));
    }

    #[test]
    fn quoting_round_trips() {
        for value in [
            "",
            "arrows",
            "it's",
            r"a\b",
            "say \"hi\"",
            "1\n2\t3\r",
            "\u{7}",
            "café",
        ] {
            let literal = quote_string(value);
            assert!(literal.starts_with('\'') && literal.ends_with('\''));
            assert_eq!(decode(&literal), (value.to_string(), vec![]), "{literal}");
        }
        assert_eq!(quote_string("it's \"x\""), r#"'it\'s "x"'"#);
    }
}
