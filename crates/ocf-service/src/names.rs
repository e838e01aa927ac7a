//! A character's name as the character list gives it (`GET /api/characters`), read from its file
//! without computing its sheet: the saved value of the field its ruleset's display hints mark
//! `title` (docs/spec/display-hints.md), as the web page's header shows it.

use ocf_model::{Character, Ruleset};

/// The longest name a list gives, in characters (a longer one is cut, with `…`).
pub const MAX_NAME: usize = 200;

/// The character's name: the title field's saved value (by its qualified ID, or its ID without
/// the pack), trimmed, when it is a string that is not blank.
pub fn name(character: &Character, ruleset: &Ruleset) -> Option<String> {
    let field = ruleset
        .field_hints
        .0
        .values()
        .find(|hint| hint.decl.title == Some(true))
        .map(|hint| &hint.decl.field)?;
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
