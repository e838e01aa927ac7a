//! Reading a character file (YAML or JSON) as the build reads a pack's files: within the same read
//! limits (file size, nesting, alias expansion), a UTF-8 byte-order mark accepted, and a refusal
//! that is a [`Problem`] with a code, a JSON pointer and a line and column.
//!
//! What the file says is checked against a ruleset by the calls that take a character (ocf-engine's
//! computeSheet `errors`, each with a `path` into the file); [`CharacterFile::locations`] turns such
//! a path into a line and column.

use std::path::Path;

use ocf_model::Character;

use crate::build::read::{Document, document, json_document};
use crate::build::source::{check_size, decode, read_bounded};
use crate::build::{Locations, Position, Problem, ReadLimits};

/// How a character file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

impl Format {
    /// JSON for a `.json` file, else YAML.
    pub fn of(path: &Path) -> Format {
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            Format::Json
        } else {
            Format::Yaml
        }
    }
}

/// A character read from its file, with where each of its nodes is.
#[derive(Debug)]
pub struct CharacterFile {
    pub character: Character,
    pub locations: Locations,
}

impl CharacterFile {
    /// Where the node at `pointer` (a computeSheet error's `path`) is written: its own position, or
    /// its nearest written ancestor's.
    pub fn position(&self, pointer: &str) -> Option<Position> {
        self.locations.value(pointer)
    }
}

/// Reads a character from `bytes`, named `file` in problems.
pub fn read_character(
    bytes: Vec<u8>,
    file: &str,
    format: Format,
    limits: &ReadLimits,
) -> Result<CharacterFile, Box<Problem>> {
    check_size(file, bytes.len() as u64, limits, &mut 0)?;
    let text = decode(file, bytes)?;
    let Document { value, locations } = match format {
        Format::Yaml => document::<Character>(&text, file, limits)?,
        Format::Json => json_document::<Character>(&text, file, limits)?,
    };
    Ok(CharacterFile {
        character: value,
        locations,
    })
}

/// Reads the character file at `path` (named as given in problems), never more than the size
/// limit: a missing or unreadable file is `unreadable-file`.
pub fn read_character_file(
    path: &Path,
    limits: &ReadLimits,
) -> Result<CharacterFile, Box<Problem>> {
    let file = path.display().to_string();
    let bytes = read_bounded(path, &file, limits.max_file_bytes)?;
    read_character(bytes, &file, Format::of(path), limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, format: Format) -> Result<Character, Box<Problem>> {
        read_character(
            text.as_bytes().to_vec(),
            "pc",
            format,
            &ReadLimits::default(),
        )
        .map(|f| f.character)
    }

    fn refusal(text: &[u8], format: Format) -> String {
        let problem =
            read_character(text.to_vec(), "pc", format, &ReadLimits::default()).unwrap_err();
        format!(
            "{}:{}:{} {} {} {:?}",
            problem.pointer,
            problem.line.unwrap_or(0),
            problem.column.unwrap_or(0),
            problem.code,
            problem.message,
            problem.data
        )
    }

    #[test]
    fn a_byte_order_mark_is_accepted() {
        let pc = read("\u{feff}id: pc\nspecVersion: 1.0.0\n", Format::Yaml).unwrap();
        assert_eq!(pc.id, "pc");
        let pc = read(
            "\u{feff}{\"id\": \"pc\", \"specVersion\": \"1.0.0\"}",
            Format::Json,
        )
        .unwrap();
        assert_eq!(pc.id, "pc");
    }

    #[test]
    fn refusals_have_a_code_a_pointer_and_a_position() {
        expect_test::expect![[r#"
            /inventory/0:3:13 invalid-document invalid type: string "x", expected struct CopyEntry {}
        "#]]
        .assert_eq(&format!(
            "{}\n",
            refusal(b"id: pc\nspecVersion: 1.0.0\ninventory: [x]\n", Format::Yaml)
        ));
        expect_test::expect![[r#"
            /inventory/0:1:52 invalid-document invalid type: string "x", expected struct CopyEntry {}
        "#]]
        .assert_eq(&format!(
            "{}\n",
            refusal(
                br#"{"id": "pc", "specVersion": "1.0.0", "inventory": ["x"]}"#,
                Format::Json
            )
        ));
        expect_test::expect![[r#"
            :2:5 invalid-document the file is not UTF-8 (byte 11) {}
        "#]]
        .assert_eq(&format!(
            "{}\n",
            refusal(b"id: pc\nid: \xff\n", Format::Yaml)
        ));
        expect_test::expect![[r#"
            :1:13 invalid-json expected `,` or `}` {}
        "#]]
        .assert_eq(&format!(
            "{}\n",
            refusal(br#"{"id": "pc" "specVersion": "1.0.0"}"#, Format::Json)
        ));
    }

    #[test]
    fn json_indented_with_tabs_keeps_its_positions() {
        expect_test::expect![[r#"
            /inventory/0:5:3 invalid-document invalid type: string "x", expected struct CopyEntry {}
        "#]]
        .assert_eq(&format!(
            "{}\n",
            refusal(
                b"{\n\t\"id\": \"pc\",\n\t\"specVersion\": \"1.0.0\",\n\t\"inventory\": [\n\t\t\"x\"\n\t]\n}\n",
                Format::Json
            )
        ));
    }

    #[test]
    fn deep_nesting_and_alias_bombs_are_refused_by_the_build_limits() {
        let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
        for format in [Format::Yaml, Format::Json] {
            let problem = refusal(deep.as_bytes(), format);
            assert!(problem.contains("safety-limit-exceeded"), "{problem}");
            assert!(problem.contains("maxNesting"), "{problem}");
        }
        let mut bomb = String::from(
            "id: pc\nspecVersion: 1.0.0\nextensions:\n  a0: &a0 [x, x, x, x, x, x, x, x, x]\n",
        );
        for i in 1..9 {
            let refs = vec![format!("*a{}", i - 1); 9].join(", ");
            bomb.push_str(&format!("  a{i}: &a{i} [{refs}]\n"));
        }
        let problem = refusal(bomb.as_bytes(), Format::Yaml);
        assert!(problem.contains("maxExpandedNodes"), "{problem}");
        let big = vec![b' '; 5 * 1024 * 1024];
        assert!(refusal(&big, Format::Yaml).contains("maxFileBytes"));
    }
}
