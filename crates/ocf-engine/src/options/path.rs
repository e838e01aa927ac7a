//! Choice paths, as `choose`, `unchoose` and `listOptions` take them (EC, "The choice list":
//! "`path`: the choice path, as `choose`, `unchoose` and `listOptions` take it"), and a pick's
//! validity. listOptions uses it today; applyChanges' `choose` and `unchoose` are meant to share it.
//!
//! A path is `{ entry?, choice }`: the owner copy's instance ID (left out for a rules-level
//! choice) and the segments, choice keys alternating with picked options, the choice's key last,
//! exactly as computeSheet's `choices` and `pending` name it (content options qualified).

use crate::db::{Activations, CharacterInput};
use ocf_model::{Literal, PickEntry, Picks};
use serde_json::{Value as Json, json};

/// A choice path with its segments written out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoicePath {
    pub entry: Option<String>,
    pub choice: Vec<String>,
}

impl ChoicePath {
    pub fn to_json(&self) -> Json {
        crate::report::path_json(self.entry.as_deref(), &self.choice)
    }

    /// Reads `{ entry?, choice: [..] }`.
    pub fn from_json(value: &Json) -> Result<ChoicePath, PathError> {
        let bad = || PathError {
            code: "invalid-path",
            message: "a choice path is `{ entry?, choice: [segments] }`".into(),
            data: json!({ "path": value }),
        };
        let map = value.as_object().ok_or_else(bad)?;
        if map.keys().any(|k| k != "entry" && k != "choice") {
            return Err(bad());
        }
        let entry = match map.get("entry") {
            None => None,
            Some(Json::String(e)) => Some(e.clone()),
            Some(_) => return Err(bad()),
        };
        let choice = map
            .get("choice")
            .and_then(Json::as_array)
            .ok_or_else(bad)?
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        if choice.is_empty() {
            return Err(bad());
        }
        Ok(ChoicePath { entry, choice })
    }
}

/// Why a path or a pick was refused: the spec's code, a message, and `data` holding the path
/// (and the option).
#[derive(Debug, Clone, PartialEq)]
pub struct PathError {
    pub code: &'static str,
    pub message: String,
    pub data: Json,
}

impl PathError {
    pub fn to_json(&self) -> Json {
        json!({ "code": self.code, "message": self.message, "data": self.data })
    }
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for PathError {}

/// The choice `path` names, as an index in [`Activations::choices`]: the choice computeSheet
/// lists under that path. Errors (decisions.md, "listOptions"):
/// - an `entry` that is no copy or applied entry of the character: `unknown-id` (`data.entry`);
/// - a path naming no choice met on the sheet: `unknown-choice` (`data.path`);
/// - a choice whose `when` is false (not applicable, so not in `choices`): `choice-not-applicable`
///   (`data.path`);
/// - a choice of an applied entry, which keeps no picks: `unknown-choice`.
pub fn resolve(acts: &Activations, path: &ChoicePath) -> Result<usize, PathError> {
    let i = resolve_listed(acts, path)?;
    if of_applied(acts, i) {
        return Err(unknown_choice(path, "an applied entry keeps no picks"));
    }
    Ok(i)
}

/// Whether the choice `record` belongs to an applied entry, which keeps no picks.
pub fn of_applied(acts: &Activations, record: usize) -> bool {
    acts.choices[record]
        .owner
        .is_some_and(|owner| acts.list[owner].copy.is_none() && acts.list[owner].entry.is_some())
}

/// The choice `path` names as listOptions lists it: as [`resolve`], but a choice of an applied
/// entry is listed too (its options can be listed, not picked: decisions.md, "listOptions").
pub fn resolve_listed(acts: &Activations, path: &ChoicePath) -> Result<usize, PathError> {
    if let Some(entry) = &path.entry
        && !acts
            .list
            .iter()
            .any(|a| a.entry.as_deref() == Some(entry.as_str()))
    {
        return Err(PathError {
            code: "unknown-id",
            message: format!("the character has no entry `{entry}`"),
            data: json!({ "entry": entry }),
        });
    }
    let found = acts
        .choices
        .iter()
        .position(|r| r.entry == path.entry && r.path == path.choice);
    let Some(i) = found else {
        return Err(unknown_choice(
            path,
            "the path names no choice of the character",
        ));
    };
    let record = &acts.choices[i];
    if !record.applicable {
        return Err(PathError {
            code: "choice-not-applicable",
            message: "the choice's `when` is false: it isn't applicable".into(),
            data: json!({ "path": path.to_json() }),
        });
    }
    Ok(i)
}

fn unknown_choice(path: &ChoicePath, message: &str) -> PathError {
    PathError {
        code: "unknown-choice",
        message: message.into(),
        data: json!({ "path": path.to_json() }),
    }
}

/// A pick's option as the choice takes it (content qualified), or `invalid-option` (`data`:
/// `path`, `option`) when it is not one of the choice's options at all: not an inline option's
/// ID, not a listed value, not in the formula's list now, not content of the query's type.
/// Whether it is *eligible* is the sheet's question (`option-not-eligible`), not this one.
pub fn check_option(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
    record: usize,
    path: &ChoicePath,
    option: &Literal,
) -> Result<Literal, PathError> {
    crate::choices::option_of(db, character, acts, record, option).ok_or_else(|| PathError {
        code: "invalid-option",
        message: format!("{option} is not an option of the choice"),
        data: json!({ "path": path.to_json(), "option": option }),
    })
}

/// The text of a pick's option as a path segment names it.
pub fn segment_text(option: &Literal) -> String {
    match option {
        Literal::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The picks of the choice at `segments` in a picks tree (a copy's `choices`, or the character's
/// for a rules-level choice), made if missing. Each option segment matches the pick whose option,
/// as written or as `qualify` gives it (a content ID written local to its pack), is the segment.
/// `None` when a picked option on the way isn't in the tree.
pub fn picks_at<'t>(
    tree: &'t mut Picks,
    segments: &[String],
    qualify: &dyn Fn(&Literal) -> Option<String>,
) -> Option<&'t mut Vec<PickEntry>> {
    let (key, rest) = segments.split_first()?;
    let picks = tree.0.entry(key.clone()).or_default();
    let Some((option, inner)) = rest.split_first() else {
        return Some(picks);
    };
    let pick = picks.iter_mut().find(|p| {
        segment_text(&p.option) == *option || qualify(&p.option).as_deref() == Some(option)
    })?;
    picks_at(&mut pick.choices, inner, qualify)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(option: &str, choices: Picks) -> PickEntry {
        PickEntry {
            option: Literal::String(option.into()),
            state: Default::default(),
            choices,
        }
    }

    /// A nested path walks the picked options' own trees; a content option written local to its
    /// pack matches its qualified segment; a missing picked option is `None`.
    #[test]
    fn picks_at_walks_nested_trees() {
        let mut inner = Picks::default();
        inner
            .0
            .insert("ability".into(), vec![pick("str", Picks::default())]);
        let mut tree = Picks::default();
        tree.0.insert("asi-1".into(), vec![pick("plus-two", inner)]);
        tree.0
            .insert("feat".into(), vec![pick("feats.alert", Picks::default())]);
        let qualify = |o: &Literal| o.as_str().map(|s| format!("p:{s}"));
        let at = picks_at(
            &mut tree,
            &["asi-1".into(), "plus-two".into(), "ability".into()],
            &qualify,
        )
        .unwrap();
        assert_eq!(at.len(), 1);
        at.push(pick("dex", Picks::default()));
        let new = picks_at(
            &mut tree,
            &["feat".into(), "p:feats.alert".into(), "x".into()],
            &qualify,
        )
        .unwrap();
        assert!(new.is_empty());
        assert!(
            picks_at(
                &mut tree,
                &["asi-1".into(), "nope".into(), "y".into()],
                &qualify
            )
            .is_none()
        );
        assert_eq!(tree.0["asi-1"][0].choices.0["ability"].len(), 2);
    }
}
