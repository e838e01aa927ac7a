//! Reading a batch file (`{ changes: [...] }` or a list of changes, YAML or JSON) for applyChanges
//! as a character file is read ([`crate::character`]): within the same read limits (file size,
//! nesting, alias expansion), a duplicate key or a number JSON can't hold refused, and every
//! refusal a [`Problem`] with a code, a JSON pointer and a line and column. What the changes say is
//! then read by ocf-engine's `read_batch`, whose error paths [`BatchFile::position`] places.

use std::path::Path;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::build::read::{Document, document, json_document};
use crate::build::source::{check_size, decode, read_bounded};
use crate::build::{Locations, Position, Problem, ReadLimits};
use crate::character::Format;

/// A batch read from its file, with where each of its nodes is.
#[derive(Debug)]
pub struct BatchFile {
    pub batch: Value,
    pub locations: Locations,
}

impl BatchFile {
    /// Where the node at `pointer` (a batch error's `path`) is written: its own position, or its
    /// nearest written ancestor's.
    pub fn position(&self, pointer: &str) -> Option<Position> {
        self.locations.value(pointer)
    }
}

/// Reads a batch from `bytes`, named `file` in problems.
pub fn read_batch(
    bytes: Vec<u8>,
    file: &str,
    format: Format,
    limits: &ReadLimits,
) -> Result<BatchFile, Box<Problem>> {
    check_size(file, bytes.len() as u64, limits, &mut 0)?;
    let text = decode(file, bytes)?;
    let Document { value, locations } = match format {
        Format::Yaml => document::<Strict>(&text, file, limits)?,
        Format::Json => json_document::<Strict>(&text, file, limits)?,
    };
    Ok(BatchFile {
        batch: value.0,
        locations,
    })
}

/// Reads the batch file at `path` (named as given in problems), never more than the size limit:
/// a missing or unreadable file is `unreadable-file`.
pub fn read_batch_file(path: &Path, limits: &ReadLimits) -> Result<BatchFile, Box<Problem>> {
    let file = path.display().to_string();
    let bytes = read_bounded(path, &file, limits.max_file_bytes)?;
    read_batch(bytes, &file, Format::of(path), limits)
}

/// A JSON tree read strictly, as the character's types read theirs: a key written twice in one map
/// is refused (`duplicate key`), as is a number JSON has no form for (`.nan`, `.inf`).
#[derive(Debug, PartialEq)]
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::invalid_value(de::Unexpected::Float(v), &"a finite number"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Strict::deserialize(d).map(|s| s.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key `{key}`")));
            }
            let Strict(value) = map.next_value()?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str, format: Format) -> String {
        let problem = read_batch(
            text.as_bytes().to_vec(),
            "b",
            format,
            &ReadLimits::default(),
        )
        .unwrap_err();
        format!(
            "{}:{}:{} {}: {}",
            problem.pointer,
            problem.line.unwrap_or(0),
            problem.column.unwrap_or(0),
            problem.code,
            problem.message,
        )
    }

    #[test]
    fn reads_a_batch() {
        let file = read_batch(
            b"changes:\n- {type: set, field: hp, value: '3'}\n".to_vec(),
            "b",
            Format::Yaml,
            &ReadLimits::default(),
        )
        .unwrap();
        assert_eq!(file.batch["changes"][0]["type"], "set");
        assert_eq!(file.position("/changes/0").map(|p| p.line), Some(2));
    }

    #[test]
    fn refuses_as_a_character_file_is_refused() {
        expect_test::expect![[r#"
            /changes:3:1 invalid-document: duplicate key `changes`
            /changes/0/value:2:35 invalid-document: invalid value: floating point `NaN`, expected a finite number
            :0:0 safety-limit-exceeded: the file is larger than 4194304 bytes
        "#]]
        .assert_eq(&format!(
            "{}\n{}\n{}\n",
            refusal(
                "changes:\n- {type: adjust, field: hp, by: '-30'}\nchanges: []\n",
                Format::Yaml
            ),
            refusal("changes:\n- {type: set, field: gold, value: .nan}\n", Format::Yaml),
            {
                let big = format!("changes: ['{}']\n", "x".repeat(5 << 20));
                refusal(&big, Format::Yaml)
            },
        ));
    }
}
