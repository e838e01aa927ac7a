//! What `ocf act` puts in front of a player, worded with the packs' texts (docs/spec/i18n.md):
//! a choice step's prompt and its options' names, a roll's band name and condition, the outcome's
//! result name. The action's output stays codes; each name is printed beside its code, and only
//! when some locale has a text for it.

use std::sync::OnceLock;

use ocf_model::text::{TextArg, TextTable, Texts, keys};
use serde_json::Value as Json;

static TABLE: OnceLock<(TextTable, String)> = OnceLock::new();

/// The ruleset's texts, read in its first pack's default locale (the first character's).
pub fn set(ruleset: &ocf_model::Ruleset) {
    let locale = ruleset.default_locale();
    let _ = TABLE.set((ruleset.texts.clone(), locale));
}

fn texts() -> Option<Texts<'static>> {
    TABLE.get().map(|(table, locale)| table.texts(locale))
}

fn find(key: &str, args: &[(&str, TextArg)]) -> Option<String> {
    texts()?.format(key, args)
}

/// ` (Name)` after a code, or nothing.
pub fn paren(name: Option<String>) -> String {
    name.map(|n| format!(" ({n})")).unwrap_or_default()
}

/// A step's prompt: `<actionKey>.steps.<step>.prompt`.
pub fn prompt(action: &str, step: &str) -> Option<String> {
    find(
        &format!("{}.steps.{step}.prompt", keys::action_root(action)),
        &[],
    )
}

/// A written option's name, `<actionKey>.options.<id>.name`; else an option a content item or type
/// adds, named by its source (`<contentId>.options.<id>.name`), else a content ID's name.
pub fn option(action: &str, option: &Json) -> Option<String> {
    let id = option["id"].as_str()?;
    let source = option["source"]["id"].as_str();
    find(
        &format!("{}.options.{id}.name", keys::action_root(action)),
        &[],
    )
    .or_else(|| source.and_then(|s| find(&keys::content(s, &format!("options.{id}.name")), &[])))
    .or_else(|| {
        id.contains(':')
            .then(|| find(&keys::content(id, "name"), &[]))
            .flatten()
    })
}

/// A result's name: the band's text for a banded result, else `<actionKey>.results.<r>.name`.
pub fn result(action: &str, band_set: Option<&str>, result: &str) -> Option<String> {
    band_set
        .and_then(|set| find(&keys::band(set, Some(result), "name"), &[]))
        .or_else(|| {
            find(
                &format!("{}.results.{result}.name", keys::action_root(action)),
                &[],
            )
        })
}

/// A roll's band, named, with its condition worded: the pack's `bands.<set>.<band>.condition`
/// with `value`, `value1`, … (EA "Wording"), else each test's `compare.<code>` text.
pub fn band(entry: &Json) -> String {
    let (Some(set), Some(band)) = (entry["bandSet"].as_str(), entry["band"].as_str()) else {
        return String::new();
    };
    let Some(texts) = texts() else {
        return String::new();
    };
    let tests: Vec<&Json> = entry["summary"]["bands"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|b| b["band"].as_str() == Some(band))
        .and_then(|b| b["tests"].as_array())
        .map(|t| t.iter().collect())
        .unwrap_or_default();
    let values: Vec<TextArg> = tests
        .iter()
        .map(|t| TextArg::from_json(&t["value"]))
        .collect();
    let names: Vec<String> = (1..=values.len()).map(|n| format!("value{n}")).collect();
    let mut args: Vec<(&str, TextArg)> = Vec::new();
    if let Some(first) = values.first() {
        args.push(("value", first.clone()));
    }
    for (name, value) in names.iter().zip(&values) {
        args.push((name.as_str(), value.clone()));
    }
    let condition = texts
        .format(&keys::band(set, Some(band), "condition"), &args)
        .or_else(|| {
            (!tests.is_empty()).then(|| {
                tests
                    .iter()
                    .map(|t| {
                        let code = t["compare"].as_str().unwrap_or_default();
                        texts.text(
                            &format!("compare.{code}"),
                            &[("value", TextArg::from_json(&t["value"]))],
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        });
    let name = texts.format(&keys::band(set, Some(band), "name"), &[]);
    match (name, condition) {
        (Some(name), Some(condition)) => format!(" ({name}: {condition})"),
        (Some(name), None) => format!(" ({name})"),
        (None, Some(condition)) => format!(" ({condition})"),
        (None, None) => String::new(),
    }
}
