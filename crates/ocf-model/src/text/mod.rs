//! The text layer (docs/spec/i18n.md): translation files, the ruleset's merged texts, and looking
//! a key up in a locale with its fallbacks. The engine's outputs stay codes and data (EA
//! "Wording"); front ends word them through here.
//!
//! A pack's keys are relative to it (`fields.abilities.str.score.name`); a key naming what a
//! dependency declares starts with that pack's ID (`5e-srd-5.1:fields.….name`). In the ruleset
//! every key is qualified (`<pack>:<key>`) except the engine's own (`errors.`, `issues.`,
//! `pauses.`, `compare.`), which are one table for every pack.

mod engine;
pub mod keys;
mod message;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Keyed;

pub use engine::engine_texts;
pub use message::{Message, MessageError, TextArg, number_text};

/// One translation file: key to message, in written order.
pub type TextFile = Keyed<String>;

/// The JSON Schema of a translation file (`ocf schema texts`): a flat map of text keys to ICU
/// MessageFormat messages. The schema says the key's shape; the build says whether it names
/// something and whether the message parses.
pub struct TranslationFileSchema;

impl JsonSchema for TranslationFileSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "TranslationFile".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "title": "TranslationFile",
            "description": "A pack's translation file (`i18n/<locale>.yaml` or `i18n/<locale>/**/*.yaml`): each text key, relative to the pack (`fields.abilities.str.score.name`) or to a dependency (`5e-srd-5.1:fields.abilities.str.score.name`), to its message in ICU MessageFormat. A key is written once per pack and locale. See docs/spec/i18n.md.",
            "type": "object",
            "propertyNames": {
                "type": "string",
                "pattern": "^([A-Za-z0-9][A-Za-z0-9._-]*:)?[^.\\s:]+(\\.[^.\\s]+)+$"
            },
            "additionalProperties": {
                "type": "string",
                "description": "ICU MessageFormat: text, `{arg}`, `{arg, number}`, `{arg, plural, …}`, `{arg, selectordinal, …}`, `{arg, select, …}`; only the arguments the key gives (i18n.md, \"Arguments\")."
            }
        })
    }
}

/// A release's texts: by locale, each key's message.
pub type PackTexts = Keyed<Keyed<String>>;

/// The first segments of the engine's own keys, which are not qualified by a pack.
pub const ENGINE_ROOTS: [&str; 4] = ["errors", "issues", "pauses", "compare"];

/// The locale a pack's texts default to when `pack.yaml` gives none.
pub const DEFAULT_LOCALE: &str = "en";

/// The ruleset's texts: every pack's, merged in load order.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TextTable {
    /// Each loaded pack's default locale, by pack ID.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub default_locales: Keyed<String>,
    /// By locale, each qualified key's message; a later pack's replaces an earlier one's.
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub messages: Keyed<Keyed<String>>,
}

/// The key `key` of pack `pack` as the ruleset keys it: qualified unless it already is or it is
/// one of the engine's own.
pub fn qualify_key(pack: &str, key: &str) -> String {
    let root = key.split('.').next().unwrap_or(key);
    if root.contains(':') || ENGINE_ROOTS.contains(&root) {
        key.to_owned()
    } else {
        format!("{pack}:{key}")
    }
}

/// Whether a tag is a BCP 47 language tag ICU4X reads (`en`, `pt-BR`, `zh-Hant`); `pt_BR` is not.
pub fn valid_locale(tag: &str) -> bool {
    !tag.contains('_') && icu_locale_core::LanguageIdentifier::try_from_str(tag).is_ok()
}

/// A locale and the ones it falls back to by dropping its last subtag (`pt-BR`, `pt`).
pub fn locale_chain(locale: &str) -> Vec<String> {
    let mut chain = Vec::new();
    let mut rest = locale.trim();
    while !rest.is_empty() {
        chain.push(rest.to_owned());
        match rest.rfind('-') {
            Some(cut) => rest = &rest[..cut],
            None => break,
        }
    }
    chain
}

impl TextTable {
    pub fn is_empty(&self) -> bool {
        self.default_locales.is_empty() && self.messages.is_empty()
    }

    /// Adds a pack's texts on top of those loaded before it.
    pub fn add_pack(&mut self, pack: &str, default_locale: Option<&str>, texts: &PackTexts) {
        self.default_locales.0.insert(
            pack.to_owned(),
            default_locale.unwrap_or(DEFAULT_LOCALE).to_owned(),
        );
        for (locale, messages) in texts.iter() {
            let table = self.messages.0.entry(locale.to_owned()).or_default();
            for (key, message) in messages.iter() {
                table.0.insert(qualify_key(pack, key), message.clone());
            }
        }
    }

    /// The texts as a reader of `locale` sees them.
    pub fn texts(&self, locale: &str) -> Texts<'_> {
        Texts {
            table: self,
            chain: locale_chain(locale),
        }
    }

    /// Every key with a message in some locale, sorted.
    pub fn keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self
            .messages
            .iter()
            .flat_map(|(_, m)| m.iter().map(|(k, _)| k))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }
}

/// The ruleset's texts in one locale, falling back: the locale, then the locales it narrows
/// (`pt-BR`, `pt`), then the default locale of the pack the key belongs to, then `en`, then (for
/// the engine's keys) the engine's English; [`Texts::text`] ends with a readable form of the ID.
#[derive(Debug, Clone)]
pub struct Texts<'a> {
    table: &'a TextTable,
    chain: Vec<String>,
}

/// A message found for a key, and the locale it is written in (whose plural rules it follows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found<'a> {
    pub locale: &'a str,
    pub message: &'a str,
}

impl<'a> Texts<'a> {
    /// The locale asked for.
    pub fn locale(&self) -> &str {
        self.chain.first().map_or(DEFAULT_LOCALE, String::as_str)
    }

    /// The message of a qualified key, by the fallback order.
    pub fn message(&self, key: &str) -> Option<Found<'a>> {
        let find = |locale: &str| -> Option<Found<'a>> {
            let (locale, messages) = self.table.messages.0.get_key_value(locale)?;
            messages.get(key).map(|message| Found {
                locale: locale.as_str(),
                message: message.as_str(),
            })
        };
        for locale in &self.chain {
            if let Some(found) = find(locale) {
                return Some(found);
            }
        }
        let pack = key.split_once(':').map(|(pack, _)| pack);
        if let Some(default) = pack.and_then(|p| self.table.default_locales.get(p)) {
            for locale in locale_chain(default) {
                if let Some(found) = find(&locale) {
                    return Some(found);
                }
            }
        }
        if let Some(found) = find(DEFAULT_LOCALE) {
            return Some(found);
        }
        engine_texts().get(key).map(|message| Found {
            locale: DEFAULT_LOCALE,
            message: message.as_str(),
        })
    }

    /// Whether some locale on the way has a message for the key.
    pub fn has(&self, key: &str) -> bool {
        self.message(key).is_some()
    }

    /// The key's message formatted with `args`, or `None` when no locale has it. A message that
    /// does not parse (the build refuses those; a release may be hand-made) is given as written.
    pub fn format(&self, key: &str, args: &[(&str, TextArg)]) -> Option<String> {
        let found = self.message(key)?;
        Some(match Message::parse(found.message) {
            Ok(message) => message.format(found.locale, args),
            Err(_) => found.message.to_owned(),
        })
    }

    /// The key's text: formatted, else a readable form of the key's ID, never nothing.
    pub fn text(&self, key: &str, args: &[(&str, TextArg)]) -> String {
        self.format(key, args).unwrap_or_else(|| humanize(key))
    }
}

/// The leaf segments a key ends with, which name the text rather than the thing.
const LEAVES: [&str; 6] = [
    "name",
    "prompt",
    "abbr",
    "description",
    "condition",
    "label",
];

/// Segments too generic to name a thing alone: the segment before is kept with them
/// (`abilities.str.score` reads "Str score").
const GENERIC: [&str; 12] = [
    "score",
    "mod",
    "modifier",
    "total",
    "value",
    "bonus",
    "max",
    "current",
    "proficiency",
    "rating",
    "base",
    "temp",
];

/// A readable form of a key's ID, when no locale has a text for it: the last segment of the ID
/// (with the one before when the last is generic), its words split at capitals, `-` and `_`,
/// the first capitalised: `5e:fields.skills.sleightOfHand.name` → "Sleight of hand",
/// `5e:fields.abilities.str.score.name` → "Str score", `errors.unknown-field` → "Unknown field".
pub fn humanize(key: &str) -> String {
    let unqualified = match key.split_once(':') {
        Some((pack, rest)) if !pack.contains('.') => rest,
        _ => key,
    };
    let mut segments: Vec<&str> = unqualified
        .split(['.', '#'])
        .filter(|s| !s.is_empty())
        .collect();
    if segments.len() > 1 && segments.last().is_some_and(|s| LEAVES.contains(s)) {
        segments.pop();
    }
    let Some(last) = segments.last() else {
        return key.to_owned();
    };
    let mut picked = vec![*last];
    if segments.len() > 1 && GENERIC.contains(last) {
        picked.insert(0, segments[segments.len() - 2]);
    }
    let mut words = Vec::new();
    for segment in picked {
        let mut word = String::new();
        for c in segment.chars() {
            if c == '-' || c == '_' || c == ' ' {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            } else if c.is_uppercase() && !word.is_empty() {
                words.push(std::mem::take(&mut word));
                word.extend(c.to_lowercase());
            } else {
                word.extend(c.to_lowercase());
            }
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    let text = words.join(" ");
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => key.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TextTable {
        let mut table = TextTable::default();
        let texts: PackTexts = serde_json::from_value(serde_json::json!({
            "en": { "fields.skills.athletics.name": "Athletics", "classes.fighter.name": "Fighter" },
            "es": { "fields.skills.athletics.name": "Atletismo" },
            "pt": { "classes.fighter.name": "Guerreiro" }
        }))
        .unwrap();
        table.add_pack("5e", None, &texts);
        let homebrew: PackTexts = serde_json::from_value(serde_json::json!({
            "en": { "5e:classes.fighter.name": "Warrior", "errors.unknown-field": "No such field" }
        }))
        .unwrap();
        table.add_pack("homebrew", None, &homebrew);
        table
    }

    #[test]
    fn fallback_and_merge() {
        let table = table();
        let es = table.texts("es-MX");
        assert_eq!(es.text("5e:fields.skills.athletics.name", &[]), "Atletismo");
        // Not in Spanish: the pack's default (en), where the homebrew replaced it.
        assert_eq!(es.text("5e:classes.fighter.name", &[]), "Warrior");
        assert_eq!(
            table.texts("pt-BR").text("5e:classes.fighter.name", &[]),
            "Guerreiro"
        );
        assert_eq!(es.text("errors.unknown-field", &[]), "No such field");
        assert_eq!(
            es.text("5e:fields.skills.sleightOfHand.name", &[]),
            "Sleight of hand"
        );
        assert_eq!(
            es.text("5e:fields.abilities.str.score.name", &[]),
            "Str score"
        );
        assert!(es.has("errors.type-mismatch"));
    }

    #[test]
    fn chains() {
        assert_eq!(locale_chain("zh-Hant-TW"), ["zh-Hant-TW", "zh-Hant", "zh"]);
        assert_eq!(qualify_key("p", "q:fields.x.name"), "q:fields.x.name");
        assert_eq!(
            qualify_key("p", "issues.out-of-limits"),
            "issues.out-of-limits"
        );
        assert_eq!(qualify_key("p", "tags.weapon.name"), "p:tags.weapon.name");
    }
}
