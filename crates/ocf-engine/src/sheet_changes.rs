//! What an edit changed on a sheet: the fields whose values changed, and which other parts of
//! computeSheet's output changed, for a live sheet editor or a service pushing changes to the
//! browser tabs showing a character ([`crate::Session::changes`]).
//!
//! The session keeps the sheet it last reported as the memos' own `Arc`s ([`Parts`]): its fields
//! as a three-level tree whose nodes are memos that re-run only when something under them changed
//! ([`crate::db::field_tree`]). Telling what changed compares the two trees by pointer, so it
//! visits the sections (one per 2 048 fields), the groups of the sections that changed, their
//! chunks that changed, and the fields of those: its cost follows what the edit changed, not the
//! sheet's size.

use std::sync::Arc;

use serde_json::{Map, Value as Json};

use crate::db::{FieldValue, Rest};
use crate::sheet::{CHUNK, FieldParts, GROUP, Parts, SECTION};

/// One field whose value changed: its ID and everything computeSheet reports of it now.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangedField {
    pub id: Arc<str>,
    pub value: Arc<FieldValue>,
}

/// Which parts of computeSheet's output changed besides the fields' `values`, each named as its
/// key there. A part derived from the fields (`competing`, the `suppressed` marks of `effects`,
/// `out-of-limits` issues, `out-of-range` errors) counts as changed when a changed field's share
/// of it changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChangedParts {
    pub competing: bool,
    pub effects: bool,
    pub activations: bool,
    pub pending: bool,
    pub choices: bool,
    pub actions: bool,
    pub offers: bool,
    pub copies: bool,
    pub copy_names: bool,
    pub issues: bool,
    pub errors: bool,
}

impl ChangedParts {
    /// Every part changed (a sheet reported whole).
    pub const ALL: ChangedParts = ChangedParts {
        competing: true,
        effects: true,
        activations: true,
        pending: true,
        choices: true,
        actions: true,
        offers: true,
        copies: true,
        copy_names: true,
        issues: true,
        errors: true,
    };

    pub fn any(&self) -> bool {
        *self != ChangedParts::default()
    }

    /// The changed parts' keys in computeSheet's output, in its order.
    pub fn keys(&self) -> Vec<&'static str> {
        [
            (self.competing, "competing"),
            (self.effects, "effects"),
            (self.activations, "activations"),
            (self.pending, "pending"),
            (self.choices, "choices"),
            (self.actions, "actions"),
            (self.offers, "offers"),
            (self.copies, "copies"),
            (self.copy_names, "copyNames"),
            (self.issues, "issues"),
            (self.errors, "errors"),
        ]
        .into_iter()
        .filter_map(|(changed, key)| changed.then_some(key))
        .collect()
    }
}

/// What changed on a character's sheet since the session last reported it
/// ([`crate::Session::changes`]).
#[derive(Debug, Clone)]
pub struct SheetChanges {
    /// The sheet is reported whole: the first report of a character, or one after its ruleset
    /// changed (a homebrew reloaded). `fields` then holds every field and `parts` every part.
    pub whole: bool,
    /// The fields whose reported value changed, in the ruleset's field order.
    pub fields: Vec<ChangedField>,
    pub parts: ChangedParts,
    /// The sheet now; `None` for a character whose homebrew failed to load, whose sheet is its
    /// errors ([`SheetChanges::to_json`]).
    now: Option<Parts>,
    /// computeSheet's output of a character whose homebrew failed to load.
    failed: Option<Json>,
}

impl SheetChanges {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        !self.whole && self.fields.is_empty() && !self.parts.any()
    }

    /// The changes as a patch of computeSheet's output: `values` holds each changed field's entry,
    /// and each changed part is given whole under its key (a part missing is unchanged). A sheet
    /// reported whole is computeSheet's output, with `"whole": true`.
    pub fn to_json(&self) -> Json {
        if self.whole {
            let mut sheet = match (&self.failed, &self.now) {
                (Some(failed), _) => failed.clone(),
                (None, Some(now)) => now.sheet().to_json(),
                (None, None) => Json::Object(Map::new()),
            };
            if let Json::Object(map) = &mut sheet {
                map.insert("whole".into(), true.into());
            }
            return sheet;
        }
        let mut patch = Map::new();
        let values: Map<String, Json> = self
            .fields
            .iter()
            .map(|f| (f.id.to_string(), crate::sheet::field_json(&f.value)))
            .collect();
        patch.insert("values".into(), Json::Object(values));
        let Some(now) = &self.now else {
            return Json::Object(patch);
        };
        let p = &self.parts;
        // The parts read from every field are found in one walk of the tree, only when one of
        // them changed.
        let from_fields = (p.competing || p.effects || p.issues || p.errors).then(|| {
            FieldParts::of(
                crate::sheet::in_field_order(&now.tree, &now.layout).into_iter(),
                false,
            )
        });
        let rest: &Rest = &now.rest;
        for key in p.keys() {
            let value = match (key, &from_fields) {
                ("competing", Some(f)) => Json::from(f.competing.clone()),
                ("effects", Some(f)) => {
                    Json::from(crate::sheet::effects_json(&now.effects, &f.suppressed))
                }
                ("activations", _) => Json::from(crate::sheet::activations_json(&now.activations)),
                ("pending", _) => Json::from(rest.judged.pending.clone()),
                ("choices", _) => Json::from(rest.judged.choices.clone()),
                ("actions", _) => crate::actions::to_json(&rest.actions),
                ("offers", _) => crate::offers::to_json(&rest.offers),
                ("copies", _) => Json::Object(crate::sheet::copies_json(rest)),
                ("copyNames", _) => Json::Object(crate::sheet::copy_names_json(rest)),
                ("issues", Some(f)) => {
                    let mut issues = crate::sheet::issues_json(rest);
                    issues.extend(f.limits.iter().cloned());
                    Json::from(issues)
                }
                ("errors", Some(f)) => {
                    let mut errors = f.errors.clone();
                    errors.extend(rest.errors.iter().cloned());
                    Json::from(errors)
                }
                _ => continue,
            };
            patch.insert(key.into(), value);
        }
        Json::Object(patch)
    }

    /// The sheet now, whole: [`crate::Sheet`] (one `Arc` clone a field).
    pub fn sheet(&self) -> Option<crate::Sheet> {
        self.now.as_ref().map(Parts::sheet)
    }

    /// Everything of `now`, reported whole.
    pub(crate) fn whole(now: Parts) -> SheetChanges {
        let fields = crate::sheet::in_field_order(&now.tree, &now.layout)
            .into_iter()
            .map(|(id, value)| ChangedField {
                id: id.clone(),
                value: value.clone(),
            })
            .collect();
        SheetChanges {
            whole: true,
            fields,
            parts: ChangedParts::ALL,
            now: Some(now),
            failed: None,
        }
    }

    /// The sheet of a character whose homebrew failed to load, `failed` (computeSheet's output).
    pub(crate) fn failed(failed: Json) -> SheetChanges {
        SheetChanges {
            whole: true,
            fields: Vec::new(),
            parts: ChangedParts::ALL,
            now: None,
            failed: Some(failed),
        }
    }

    /// What changed from `old` to `now`.
    pub(crate) fn between(old: &Parts, now: Parts) -> SheetChanges {
        // The layout is one `Arc` per ruleset: compared by pointer first (20 000 fields are
        // 80 KB to compare).
        if old.tree.len() != now.tree.len()
            || !Arc::ptr_eq(&old.layout, &now.layout) && old.layout != now.layout
        {
            return SheetChanges::whole(now);
        }
        let mut parts = ChangedParts::default();
        // Each changed field with its place in field order, which the tree's order isn't.
        let mut fields = Vec::with_capacity(CHUNK);
        let sections = old.tree.iter().zip(now.tree.iter());
        for (s, (old_section, section)) in sections.enumerate() {
            if Arc::ptr_eq(old_section, section) {
                continue;
            }
            if old_section.len() != section.len() {
                return SheetChanges::whole(now);
            }
            let groups = old_section.iter().zip(section.iter());
            for (g, (old_group, group)) in groups.enumerate() {
                if Arc::ptr_eq(old_group, group) {
                    continue;
                }
                if old_group.len() != group.len() {
                    return SheetChanges::whole(now);
                }
                for (c, (old_chunk, chunk)) in old_group.iter().zip(group.iter()).enumerate() {
                    if Arc::ptr_eq(old_chunk, chunk) {
                        continue;
                    }
                    if old_chunk.len() != chunk.len() {
                        return SheetChanges::whole(now);
                    }
                    // The place in the tree of the chunk's first field: every chunk before the
                    // tree's last is full (the layout places each of the ruleset's fields once).
                    let first = ((s * SECTION + g) * GROUP + c) * CHUNK;
                    let pairs = old_chunk.iter().zip(chunk.iter());
                    for (place, ((old_id, old_value), (id, value))) in (first..).zip(pairs) {
                        if !Arc::ptr_eq(old_id, id) && old_id != id {
                            return SheetChanges::whole(now);
                        }
                        // A field that re-ran to an equal value has a new `Arc` and is no change.
                        if Arc::ptr_eq(old_value, value) || old_value == value {
                            continue;
                        }
                        parts.competing |= old_value.competing != value.competing;
                        parts.effects |= old_value.suppressed != value.suppressed;
                        parts.issues |= old_value.out_of_limits != value.out_of_limits;
                        parts.errors |= old_value.out_of_range != value.out_of_range;
                        let order = now.layout.get(place).copied().unwrap_or(u32::MAX);
                        fields.push((
                            order,
                            ChangedField {
                                id: id.clone(),
                                value: value.clone(),
                            },
                        ));
                    }
                }
            }
        }
        parts.effects |= !Arc::ptr_eq(&old.effects, &now.effects)
            && (old.effects.len() != now.effects.len()
                || old
                    .effects
                    .iter()
                    .zip(now.effects.iter())
                    .any(|(a, b)| a != b));
        parts.activations |=
            !Arc::ptr_eq(&old.activations, &now.activations) && old.activations != now.activations;
        if !Arc::ptr_eq(&old.rest, &now.rest) {
            let (a, b) = (&*old.rest, &*now.rest);
            if !Arc::ptr_eq(&a.judged, &b.judged) {
                let (a, b) = (&*a.judged, &*b.judged);
                parts.issues |= a.issues != b.issues;
                parts.choices |= a.choices != b.choices;
                parts.pending |= a.pending != b.pending;
            }
            parts.copies |= a.copies != b.copies;
            parts.copy_names |= a.copy_names != b.copy_names;
            parts.errors |= a.errors != b.errors;
            parts.actions |= a.actions != b.actions;
            parts.offers |= a.offers != b.offers;
        }
        // The tree's order follows field order within a root's fields: often already sorted.
        if !fields.is_sorted_by_key(|(order, _)| *order) {
            fields.sort_by_key(|(order, _)| *order);
        }
        SheetChanges {
            whole: false,
            fields: fields.into_iter().map(|(_, field)| field).collect(),
            parts,
            now: Some(now),
            failed: None,
        }
    }
}
