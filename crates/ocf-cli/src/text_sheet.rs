//! The player's sheet (`ocf sheet`): computeSheet's output worded with the packs' texts and laid
//! out by their display hints (docs/spec/display-hints.md): the headline, then each display group
//! in order with its hinted fields, each content group with its members' names, then what is
//! pending and the issues, named. The engine's output stays codes and data; this is the front
//! end applying the text layer.

use ocf_model::text::{TextArg, Texts, keys, number_text};
use ocf_model::{FieldHint, Hidden, Ruleset, Show};
use serde_json::Value;

/// Whether the ruleset lays out a player's sheet (some pack gives field hints).
pub fn has_layout(ruleset: &Ruleset) -> bool {
    !ruleset.field_hints.is_empty()
}

/// The name of a qualified ID, whatever it names: a field, a content item, a content type.
pub fn name_of(ruleset: &Ruleset, texts: &Texts<'_>, id: &str) -> String {
    let key = if ruleset.fields.get(id).is_some() {
        keys::field(id, "name")
    } else if ruleset.content_types.get(id).is_some() {
        keys::content_type(id, "name")
    } else {
        keys::content(id, "name")
    };
    let args: &[(&str, TextArg)] = &[("count", TextArg::Number(1.0))];
    texts.text(&key, args)
}

/// The most dots or boxes drawn: a hostile pack's value or bound can't make the line unbounded.
const MAX_MARKS: f64 = 100.0;

/// A hinted value as the hint shows it.
fn shown(
    ruleset: &Ruleset,
    texts: &Texts<'_>,
    hint: &FieldHint,
    value: &Value,
    of: Option<&Value>,
) -> String {
    let number = value.as_f64();
    let max = hint.max.map(f64::from).or_else(|| {
        let bound = ruleset.fields.get(hint.field.as_str())?.decl.max.as_ref()?;
        bound.as_str().trim().parse::<f64>().ok()
    });
    let show = hint.show.unwrap_or(match value {
        Value::Bool(_) => Show::Box,
        Value::String(_) | Value::Array(_) => Show::Text,
        _ => Show::Number,
    });
    let of_text = of.map(|v| match v.as_f64() {
        Some(n) => number_text(n),
        None => plain(v),
    });
    match (show, number) {
        (Show::Modifier, Some(n)) => {
            if n < 0.0 {
                format!("-{}", number_text(-n))
            } else {
                format!("+{}", number_text(n))
            }
        }
        (Show::Dots, Some(n)) => {
            let total = max.unwrap_or(n).max(n).clamp(0.0, MAX_MARKS) as usize;
            let filled = n.clamp(0.0, MAX_MARKS) as usize;
            format!(
                "{}{}",
                "●".repeat(filled),
                "○".repeat(total.saturating_sub(filled))
            )
        }
        (Show::Track, Some(n)) => {
            let length = of.and_then(Value::as_f64).or(max).unwrap_or(n).max(n);
            let total = length.clamp(0.0, MAX_MARKS) as usize;
            let filled = n.clamp(0.0, MAX_MARKS) as usize;
            format!(
                "{}{} {}/{}",
                "■".repeat(filled),
                "□".repeat(total.saturating_sub(filled)),
                number_text(n),
                number_text(length)
            )
        }
        (Show::Clock, Some(n)) => {
            let total = of.and_then(Value::as_f64).or(max).unwrap_or(n);
            format!("({}/{})", number_text(n), number_text(total))
        }
        (Show::Box, _) | (_, None) if value.is_boolean() => {
            if value.as_bool() == Some(true) {
                "[x]".into()
            } else {
                "[ ]".into()
            }
        }
        (Show::Text, _) => match value {
            Value::Array(items) => items
                .iter()
                .map(|v| text_value(ruleset, texts, v, hint.field.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
            other => text_value(ruleset, texts, other, hint.field.as_str()),
        },
        (_, Some(n)) => match of_text {
            Some(of) => format!("{} / {of}", number_text(n)),
            None => number_text(n),
        },
        (_, None) => plain(value),
    }
}

/// A text value's name: a qualified ID's, else a tag's of the field's pack (a set of tags), else
/// as written.
fn text_value(ruleset: &Ruleset, texts: &Texts<'_>, value: &Value, field: &str) -> String {
    match value.as_str() {
        Some(id) if id.contains(':') => name_of(ruleset, texts, id),
        Some(word) => {
            let pack = keys::split(field).0.unwrap_or_default();
            texts
                .format(&keys::tag(&format!("{pack}:{word}")), &[])
                .unwrap_or_else(|| word.to_owned())
        }
        None => plain(value),
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "—".into(),
        other => ocf_formula::json_text::to_string(other).unwrap_or_default(),
    }
}

fn is_default(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        // No dice, written as the engine writes a zero dice value.
        Value::String(s) => s.is_empty() || s == "0",
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// The player's sheet in `locale`.
pub fn render(ruleset: &Ruleset, sheet: &Value, locale: &str) -> String {
    let texts = ruleset.texts.texts(locale);
    let values = &sheet["values"];
    let value_of = |id: &str| -> Option<&Value> {
        let field = values.get(id)?;
        if field.get("error").is_some_and(|e| !e.is_null()) {
            return None;
        }
        field.get("value")
    };
    let hint_of = |id: &str| {
        ruleset
            .field_hints
            .iter()
            .map(|(_, h)| &h.decl)
            .find(|h| h.field.as_str() == id)
    };
    let line = |hint: &FieldHint| -> Option<String> {
        let field = hint.field.as_str();
        let value = value_of(field)?;
        match hint.hidden {
            Some(Hidden::Always) => return None,
            Some(Hidden::WhenDefault) if is_default(value) => return None,
            _ => {}
        }
        let of = hint.of.as_ref().and_then(|of| value_of(of.as_str()));
        // A resource counted by a separate `spent` field: what is left of its maximum.
        let left = hint
            .spent
            .as_ref()
            .filter(|spent| spent.as_str() != field)
            .and_then(|spent| value_of(spent.as_str()))
            .and_then(|spent| Some((value.as_f64()?, spent.as_f64()?)))
            .map(|(max, spent)| format!("{} / {}", number_text(max - spent), number_text(max)));
        let mut text = format!(
            "{} {}",
            texts.text(&keys::field(field, "name"), &[]),
            left.unwrap_or_else(|| shown(ruleset, &texts, hint, value, of))
        );
        if let Some(beside) = &hint.beside
            && let Some(value) = value_of(beside.as_str())
        {
            let beside_hint = hint_of(beside.as_str())
                .cloned()
                .unwrap_or_else(|| FieldHint {
                    id: String::new(),
                    field: beside.clone(),
                    group: None,
                    order: None,
                    show: None,
                    max: None,
                    of: None,
                    beside: None,
                    headline: None,
                    hidden: None,
                    roll: None,
                    spent: None,
                    title: None,
                });
            if !(beside_hint.hidden == Some(Hidden::WhenDefault) && is_default(value)) {
                text.push(' ');
                text.push_str(&shown(ruleset, &texts, &beside_hint, value, None));
            }
        }
        Some(text)
    };
    let mut hints: Vec<(usize, &FieldHint)> = ruleset
        .field_hints
        .iter()
        .enumerate()
        .map(|(i, (_, h))| (i, &h.decl))
        .collect();
    hints.sort_by_key(|(i, h)| (h.order.unwrap_or(i64::MAX), *i));

    let mut out = String::new();
    let headline: Vec<String> = hints
        .iter()
        .filter(|(_, h)| h.headline == Some(true))
        .filter_map(|(_, h)| line(h))
        .collect();
    if !headline.is_empty() {
        out.push_str(&headline.join(" · "));
        out.push('\n');
    }
    let mut groups: Vec<(
        usize,
        &ocf_model::ruleset::Declared<ocf_model::DisplayGroup>,
    )> = ruleset
        .display_groups
        .iter()
        .enumerate()
        .map(|(i, (_, g))| (i, g))
        .collect();
    groups.sort_by_key(|(i, g)| (g.decl.order.unwrap_or(i64::MAX), *i));
    for (_, group) in groups {
        let mut lines = Vec::new();
        if let Some(ty) = &group.decl.r#type {
            for activation in sheet["activations"].as_array().into_iter().flatten() {
                let Some(item) = activation["item"].as_str() else {
                    continue;
                };
                let of_type = ruleset
                    .item(item)
                    .and_then(|i| i.type_name())
                    .is_some_and(|t| t == ty.as_str());
                if of_type {
                    let name = name_of(ruleset, &texts, item);
                    if !lines.contains(&name) {
                        lines.push(name);
                    }
                }
            }
        } else {
            for (_, hint) in &hints {
                if hint.group.as_deref() == Some(group.decl.id.as_str())
                    && hint.headline != Some(true)
                    && let Some(text) = line(hint)
                {
                    lines.push(text);
                }
            }
        }
        if lines.is_empty() {
            continue;
        }
        let key = format!("{}:groups.{}.name", group.pack, group.decl.id);
        out.push_str(&format!("\n{}\n", texts.text(&key, &[])));
        for text in lines {
            out.push_str(&format!("  {text}\n"));
        }
    }
    let pending = sheet["pending"].as_array().cloned().unwrap_or_default();
    if !pending.is_empty() {
        out.push_str("\nTo choose\n");
        for choice in pending {
            out.push_str(&format!("  {}\n", choice_prompt(sheet, &texts, &choice)));
        }
    }
    let issues = sheet["issues"].as_array().cloned().unwrap_or_default();
    let errors = sheet["errors"].as_array().cloned().unwrap_or_default();
    if !issues.is_empty() || !errors.is_empty() {
        out.push_str("\nIssues\n");
        for issue in issues {
            out.push_str(&format!("  {}\n", coded(&texts, "issues", &issue)));
        }
        for error in errors {
            out.push_str(&format!("  {}\n", coded(&texts, "errors", &error)));
        }
    }
    out
}

/// An issue's or error's engine text, with its `data` as arguments, and its code.
fn coded(texts: &Texts<'_>, root: &str, entry: &Value) -> String {
    let code = entry["code"].as_str().unwrap_or_default();
    let data: Vec<(String, TextArg)> = entry["data"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), TextArg::from_json(v)))
        .collect();
    let args: Vec<(&str, TextArg)> = data.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    format!("{} ({code})", texts.text(&format!("{root}.{code}"), &args))
}

/// A pending choice's prompt: `<contentId>.choices.<choice>.prompt` of its owner (a nested one
/// under its parent options), or `choices.<id>.prompt` for a rules-level choice.
pub fn choice_prompt(sheet: &Value, texts: &Texts<'_>, pending: &Value) -> String {
    let path: Vec<&str> = pending["path"]["choice"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let slot = pending["slot"]["number"].as_f64();
    let args: Vec<(&str, TextArg)> = slot
        .map(|n| ("slot", TextArg::Number(n)))
        .into_iter()
        .collect();
    // The owner: the copy's item (the activation of the path's entry), else the rules.
    let entry = pending["path"]["entry"].as_str();
    let owner = entry.and_then(|entry| {
        sheet["activations"]
            .as_array()?
            .iter()
            .find(|a| a["entry"].as_str() == Some(entry) && a["via"].as_str() == Some("copy"))?
            ["item"]
            .as_str()
    });
    let key = match owner {
        None => {
            let id = path.first().copied().unwrap_or_default();
            keys::rules("choices", strip_slot(id), "prompt")
        }
        Some(owner) => {
            let mut key = keys::content(owner, "choices");
            for (i, segment) in path.iter().enumerate() {
                // Choice keys and picked options alternate: `asi`, `plus-two`, `ability`.
                let segment = strip_slot(segment);
                if i % 2 == 0 {
                    key.push_str(&format!(".{segment}"));
                } else {
                    key.push_str(&format!(".options.{segment}.choices"));
                }
            }
            key.push_str(".prompt");
            key
        }
    };
    texts.text(&key, &args)
}

/// A slotted choice's key `<id>-<n>` as its declaration's ID.
fn strip_slot(segment: &str) -> &str {
    match segment.rsplit_once('-') {
        Some((id, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => id,
        _ => segment,
    }
}
