//! The common document read in one pass: the parser's events made into a YAML value, which the typed
//! reading takes, instead of a second parser (serde_yaml's) reading the text again.
//!
//! Only plain documents take this way: no alias, no tag, no duplicate key, and scalars whose
//! reading is the simple one (decimal numbers, `true`/`false`, `null`, strings). For anything
//! else, and whenever the typed reading refuses the value, the caller reads the text as before, so
//! every message an author sees is serde_yaml's, with its path and position. The read limits hold
//! here too: a document nested deeper, or with more nodes, than they allow is left to the caller,
//! whose index reports it.
//!
//! A scalar is resolved as serde_yaml resolves an untagged one, so the value read is the same: debug
//! builds read every document both ways and compare.

use saphyr_parser::{Event, Parser, ScalarStyle, StrInput};
use serde::de::DeserializeOwned;
use serde_yaml::{Mapping, Number, Value};

use super::limits::ReadLimits;

/// `text` read into `T` through its events, or `None` where the caller must read it the general way.
pub fn read<T: DeserializeOwned>(text: &str, limits: &ReadLimits) -> Option<T> {
    let value = value(text, limits)?;
    T::deserialize(value).ok()
}

/// An open map or list: its items so far, and for a map the key waiting for its value.
enum Open {
    List(Vec<Value>),
    Map(Mapping, Option<Value>),
}

/// The first document of `text` as a value, or `None` (see the module's doc).
fn value(text: &str, limits: &ReadLimits) -> Option<Value> {
    if !printable(text) {
        return None;
    }
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Open> = Vec::new();
    let mut nodes: u64 = 0;
    while let Some(event) = parser.next_event() {
        let (event, _) = event.ok()?;
        let node = match event {
            Event::Scalar(text, style, _, None) => {
                nodes += 1;
                scalar(&text, style)?
            }
            Event::SequenceStart(_, None) | Event::MappingStart(_, None) => {
                nodes += 1;
                if stack.len() >= limits.max_nesting {
                    return None;
                }
                stack.push(match event {
                    Event::SequenceStart(..) => Open::List(Vec::new()),
                    _ => Open::Map(Mapping::new(), None),
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop()? {
                Open::List(items) => Value::Sequence(items),
                Open::Map(map, None) => Value::Mapping(map),
                Open::Map(_, Some(_)) => return None,
            },
            Event::Nothing | Event::StreamStart | Event::DocumentStart(_) => continue,
            // A document with no node is left to the caller, which reads it as an empty map.
            Event::DocumentEnd | Event::StreamEnd => return None,
            // An alias, or a tag: serde_yaml's reading of them is its own.
            Event::Alias(_)
            | Event::Scalar(..)
            | Event::SequenceStart(..)
            | Event::MappingStart(..) => {
                return None;
            }
        };
        if nodes > limits.max_expanded_nodes {
            return None;
        }
        match stack.last_mut() {
            None => return only(parser, node),
            Some(Open::List(items)) => items.push(node),
            Some(Open::Map(_, key @ None)) => *key = Some(node),
            Some(Open::Map(map, key @ Some(_))) => {
                if map.insert(key.take()?, node).is_some() {
                    return None;
                }
            }
        }
    }
    None
}

/// Whether every character of `text` is one YAML allows in a document (its printable set, as
/// libyaml checks it: serde_yaml refuses the others, where saphyr reads some of them).
fn printable(text: &str) -> bool {
    let ascii = |b: u8| matches!(b, b'\t' | b'\n' | b'\r' | 0x20..=0x7e);
    text.bytes().all(|b| ascii(b) || b >= 0x80)
        && (text.is_ascii()
            || text.chars().all(|c| {
                c.is_ascii()
                    || matches!(c, '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
                    || c >= '\u{10000}'
            }))
}

/// The document's root, when nothing follows it but the end of the stream: serde_yaml refuses a
/// second document, and a syntax error after the first.
fn only(mut parser: Parser<'_, StrInput<'_>>, root: Value) -> Option<Value> {
    while let Some(event) = parser.next_event() {
        match event.ok()?.0 {
            Event::DocumentEnd | Event::StreamEnd | Event::Nothing => {}
            _ => return None,
        }
    }
    Some(root)
}

/// A scalar's value as serde_yaml reads an untagged one (its `visit_untagged_scalar`): quoted and
/// block scalars are strings; a plain one is null, a boolean, a number or a string. `None` for the
/// plain forms this reading leaves to serde_yaml: a leading `+`, hexadecimal, octal and binary
/// numbers, infinities and NaN, and integers beyond 64 bits.
fn scalar(text: &str, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::String(text.to_owned()));
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        _ => {}
    }
    let first = text.as_bytes()[0];
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return Some(Value::String(text.to_owned()));
    }
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    if text.starts_with('+')
        || unsigned.starts_with("0x")
        || unsigned.starts_with("0o")
        || unsigned.starts_with("0b")
        || unsigned.starts_with('.')
    {
        return None;
    }
    // Leading zeros before digits make a string in YAML 1.2, as in serde_yaml.
    let digits = unsigned.bytes().all(|b| b.is_ascii_digit());
    if digits && unsigned.len() > 1 && unsigned.starts_with('0') {
        return Some(Value::String(text.to_owned()));
    }
    if digits && !unsigned.is_empty() {
        return match text.starts_with('-') {
            false => text
                .parse::<u64>()
                .ok()
                .map(|n| Value::Number(Number::from(n))),
            true => text
                .parse::<i64>()
                .ok()
                .map(|n| Value::Number(Number::from(n))),
        };
    }
    match text.parse::<f64>() {
        Ok(float) if float.is_finite() => Some(Value::Number(Number::from(float))),
        // `inf`, `NaN` and the like: serde_yaml's own spellings of them start with `.`.
        Ok(_) => None,
        Err(_) => Some(Value::String(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ReadLimits {
        crate::build::limits::ReadLimits::default()
    }

    /// Every scalar this reading resolves, it resolves as serde_yaml does.
    #[test]
    fn scalars_as_serde_yaml_reads_them() {
        let plain = [
            "",
            "~",
            "null",
            "Null",
            "NULL",
            "true",
            "True",
            "FALSE",
            "yes",
            "no",
            "0",
            "7",
            "-7",
            "007",
            "-007",
            "1.5",
            "-1.5",
            "1e3",
            "1.",
            "2d6",
            "-",
            "-x",
            "1_000",
            "18446744073709551615",
            "-9223372036854775808",
            "3.0",
            "6.02e23",
            "1e400",
            "a: b",
            "1/2",
            "12abc",
        ];
        for text in plain {
            let document = format!("v: {text}\n");
            if let Some(ours) = value(&document, &limits()) {
                let theirs: Value = serde_yaml::from_str(&document).expect("yaml");
                assert_eq!(ours, theirs, "{text:?}");
            }
        }
    }

    #[test]
    fn what_is_left_to_serde_yaml() {
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !tag 1\n",
            "a: 1\na: 2\n",
            "a: 0x10\n",
            "a: +1\n",
            "a: .inf\n",
            "# nothing\n",
            "a: [\n",
            "a: 1\n---\nb: 2\n",
            "a: 1\n]\n",
            "a: b\u{1e}c\n",
        ] {
            assert_eq!(value(text, &limits()), None, "{text:?}");
        }
        let deep = "[".repeat(10) + &"]".repeat(10);
        let shallow = ReadLimits {
            max_nesting: 5,
            ..limits()
        };
        assert_eq!(value(&deep, &shallow), None);
    }

    #[test]
    fn a_document_as_serde_yaml_reads_it() {
        let text = "id: x\nlist: [1, -2, 2.5, 'q', \"0x1\", null]\nmap:\n  k: |\n    two\n    lines\n  n: ~\n";
        let ours = value(text, &limits()).expect("plain");
        let theirs: Value = serde_yaml::from_str(text).expect("yaml");
        assert_eq!(ours, theirs);
    }
}
