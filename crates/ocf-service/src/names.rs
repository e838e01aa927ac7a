//! A character's name as the character list gives it (`GET /api/characters`), read from its file
//! without computing its sheet: the saved value of the field its ruleset's display hints mark
//! `title` (docs/spec/display-hints.md), as the web page's header shows it.

use ocf_model::{Character, Id, Ruleset};

/// The longest name a list gives, in characters (a longer one is cut, with `…`).
pub const MAX_NAME: usize = 200;

/// The field the ruleset's display hints mark `title`, if any.
pub fn title_field(ruleset: &Ruleset) -> Option<Id> {
    ruleset
        .field_hints
        .0
        .values()
        .find(|hint| hint.decl.title == Some(true))
        .map(|hint| hint.decl.field.clone())
}

/// What names the ruleset a character computes on: its pins, in order ([`crate::rulesets`]
/// gives a ruleset for a character's pins).
pub fn pins(character: &Character) -> String {
    character
        .packs
        .iter()
        .map(|pin| format!("{}@{}", pin.id.as_str(), pin.version.as_str()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The character's name: the title field's saved value (by its qualified ID, or its ID without
/// the pack), trimmed, when it is a string that is not blank.
pub fn name(character: &Character, field: &Id) -> Option<String> {
    let local = field
        .as_str()
        .split_once(':')
        .map_or(field.as_str(), |(_, local)| local);
    let value = character
        .values
        .0
        .get(field.as_str())
        .or_else(|| character.values.0.get(local))?;
    let name = value.as_str()?.trim();
    if name.is_empty() {
        return None;
    }
    Some(if name.chars().count() > MAX_NAME {
        let mut cut: String = name.chars().take(MAX_NAME - 1).collect();
        cut.push('…');
        cut
    } else {
        name.to_owned()
    })
}
