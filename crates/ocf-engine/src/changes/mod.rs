//! applyChanges (docs/spec/engine-interface.md, "applyChanges"): a batch of changes applied in
//! order to one character, atomically.
//!
//! The batch runs through a [`Session`]: each change edits the working file, and the session is
//! brought to it ([`Session::update`]), so a later change's formulas see the earlier ones and
//! only what an edit touched is recomputed. A change that fails ends the batch and the session
//! goes back to the file it started from. [`apply_changes`] is the call on a fresh session;
//! [`Session::apply`] the same on an open character.
//!
//! [`targets`] resolves what a change is for (an entry, copies by query, applied entries), one
//! module per family of change types does the change ([`fields`], [`copies`], [`applied`],
//! [`picks`], [`offers`]), [`routing`] takes an adjust through incoming-change effects, absorbing
//! fields and overflow, [`follow_ups`] finds what the batch triggered, and [`batch`] holds the
//! output.

pub mod applied;
pub mod applier;
pub mod batch;
pub mod copies;
pub mod eval;
pub mod fields;
pub mod follow_ups;
pub mod offers;
pub mod pick_state;
pub mod picks;
pub mod readable;
pub mod routing;
pub mod session_apply;
pub mod situational;
pub mod targets;
pub mod upgrade;

use std::sync::Arc;

use ocf_formula::{Root, Value};
use ocf_model::{Change, ChangeType, Character, Ruleset};
use serde_json::{Map, Value as Json, json};

pub use applier::{Options, literal, made_id, type_mismatch};
pub use batch::{Adjustment, Applied, ChangeError};
pub use eval::{OwnedSelf, Scope};

use applier::Applier;

use crate::session::Session;

/// `maxOverflowChain` (PROVISIONAL; decisions.md, issue 12): how many fields one adjust may pass
/// through, absorbing fields and overflow together.
pub const MAX_OVERFLOW_CHAIN: usize = 16;

/// The most changes one batch may make, `forEach` copies included (`maxActionSteps` bounds the
/// changes an action proposes; a batch from an app is bounded the same).
pub const MAX_BATCH_CHANGES: usize = 10_000;

/// applyChanges: `batch` applied in order to `character` (its homebrew layered on `ruleset`
/// first). The input is never changed; a batch that fails gives its one error and nothing else.
#[tracing::instrument(name = "applyChanges", level = "info", skip_all, fields(character = %character.id, changes = batch.len()))]
pub fn apply_changes(
    ruleset: &Ruleset,
    character: &Character,
    batch: &[Change],
    options: Options<'_>,
) -> Result<Applied, ChangeError> {
    let mut session = Session::new(ruleset.clone());
    let id = session.open(character, &[]);
    let errors = session.homebrew_errors(id);
    if let Some(first) = errors.first() {
        // The call's one error is the first load error, its path in the call's input
        // (`/character` + its path into the character), `cause` and `detail` as it has them, and
        // every error in `data.errors` (decisions.md, issue 36).
        let code = first
            .get("code")
            .and_then(Json::as_str)
            .unwrap_or("homebrew-error")
            .to_owned();
        let path = first
            .get("path")
            .and_then(Json::as_str)
            .unwrap_or("/homebrew");
        let mut data = match first.get("data") {
            Some(Json::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        data.insert("errors".into(), Json::Array(errors.to_vec()));
        return Err(ChangeError::new(
            &code,
            format!("/character{path}"),
            "the homebrew does not load",
        )
        .with_data(Json::Object(data)));
    }
    let _ = session.set_links(id, options.links.clone());
    session.apply(id, batch, options)
}

/// applyChanges with a batch as JSON (`{ changes: [...] }` or the list): the output as JSON, or
/// `{ errors: [...] }` (one error for a failed batch, or the batch's reading errors).
pub fn apply_changes_json(
    ruleset: &Ruleset,
    character: &Character,
    batch: &Json,
    options: Options<'_>,
) -> Json {
    match read_batch(batch) {
        Ok(changes) => match apply_changes(ruleset, character, &changes, options) {
            Ok(applied) => applied.to_json(),
            Err(error) => json!({ "errors": [error] }),
        },
        Err(error) => json!({ "errors": [error] }),
    }
}

/// Reads a batch: `{ changes: [...] }` or a bare list of changes, each read by ocf-model (a
/// misplaced key is an error with its path).
pub fn read_batch(batch: &Json) -> Result<Vec<Change>, ChangeError> {
    let list = match batch {
        Json::Object(map) => map.get("changes").cloned().unwrap_or(Json::Null),
        other => other.clone(),
    };
    let Json::Array(items) = list else {
        return Err(ChangeError::new(
            "schema-error",
            "/changes",
            "a batch is `{ changes: [...] }` or a list of changes",
        ));
    };
    if items.len() > MAX_BATCH_CHANGES {
        return Err(ChangeError::new(
            "safety-limit-exceeded",
            "/changes",
            format!("a batch holds at most {MAX_BATCH_CHANGES} changes"),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_value::<Change>(item.clone()).map_err(|e| {
                ChangeError::new("schema-error", format!("/changes/{i}"), e.to_string())
            })
        })
        .collect()
}

impl<'s, 'd> Applier<'s, 'd> {
    /// Runs the batch. On an error the caller puts the session back.
    pub fn run(mut self, batch: &[Change]) -> Result<Applied, ChangeError> {
        let before = follow_ups::Snapshot::take(&self);
        for (i, change) in batch.iter().enumerate() {
            let path = format!("/changes/{i}");
            let mut written = change.clone();
            let record = self.change(&path, change, &mut written)?;
            // No scope outlives its change, so the list is not shared here and grows in place.
            Arc::make_mut(&mut self.batch_list)
                .push(Value::from_json(&record).unwrap_or(Value::Null));
            self.records.push(record);
            self.batch.push(written);
        }
        // Each change brought the session to the file; what the triggers add is stored offers
        // alone, so only a trigger that stored one leaves the session behind the file.
        let offers = self.file.follow_ups.len();
        follow_ups::triggered(&mut self, &before)?;
        if self.file.follow_ups.len() != offers {
            self.sync();
        }
        // The file must read back within the character-file limits: checked once per batch that
        // writes free-form data (other changes write what the ruleset's shapes and the formula
        // limits bound), so an edit through a session doesn't pay for the whole file.
        if batch
            .iter()
            .any(|c| matches!(c.r#type, ChangeType::SetExtension | ChangeType::SetHomebrew))
        {
            readable::check_file(&self.file, "/changes")?;
        }
        Ok(Applied {
            character: self.file,
            batch: self.batch,
            adjustments: self.adjustments,
            changes: self.records,
            follow_ups: self.follow_ups,
            skipped: self.skipped,
        })
    }

    /// One change of the batch: its `when`, its `forEach`, then the change itself.
    fn change(
        &mut self,
        path: &str,
        change: &Change,
        written: &mut Change,
    ) -> Result<Json, ChangeError> {
        let kind = change.r#type.name();
        self.faces_next = 0;
        self.faces_used.clear();
        let scope = self.scope();
        if let Some(when) = &change.when
            && !self.eval_bool(when, &scope, &format!("{path}/when"))?
        {
            return Ok(json!({ "type": kind, "applied": false }));
        }
        let Some(for_each) = &change.for_each else {
            self.count(path)?;
            let mut record = self.one(path, change, written, &scope)?;
            record.insert("type".into(), kind.into());
            return Ok(Json::Object(record));
        };
        let list = match self.eval(for_each.as_str(), &scope, &format!("{path}/forEach"))? {
            Value::List(items) => items,
            other => return Err(type_mismatch(&format!("{path}/forEach"), "a list", &other)),
        };
        let mut each = Vec::new();
        for x in list.iter() {
            self.count(path)?;
            let scope = self.scope().with_root(Root::X, x.clone());
            each.push(Json::Object(self.one(path, change, written, &scope)?));
        }
        Ok(json!({ "type": kind, "each": each }))
    }

    fn count(&mut self, path: &str) -> Result<(), ChangeError> {
        self.made += 1;
        if self.made > MAX_BATCH_CHANGES {
            return Err(ChangeError::new(
                "safety-limit-exceeded",
                path,
                format!("a batch makes at most {MAX_BATCH_CHANGES} changes"),
            )
            .with_data(json!({ "limit": "maxActionSteps" })));
        }
        Ok(())
    }

    /// Applies one change (one `forEach` element), then brings the session to the file.
    fn one(
        &mut self,
        path: &str,
        change: &Change,
        written: &mut Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        use ChangeType::*;
        let record = match change.r#type {
            Set => self.set(path, change, scope)?,
            Adjust => self.adjust(path, change, written, scope)?,
            AddItem => self.add_item(path, change, scope)?,
            RemoveItem => self.remove_item(path, change, scope)?,
            Equip => self.equip(path, change, scope)?,
            SetQuantity | AdjustQuantity => self.quantity(path, change, scope)?,
            SetState | AdjustState => self.state(path, change, scope)?,
            ApplyEffect => self.apply_effect(path, change, scope)?,
            RemoveEffect => self.remove_effect(path, change, scope)?,
            ToggleEffect => self.toggle_effect(path, change, scope)?,
            ApplyTemplate | RemoveTemplate => self.template(path, change, scope)?,
            Choose => self.choose(path, change, scope)?,
            Unchoose => self.unchoose(path, change, scope)?,
            FinishCreation => self.finish_creation(path)?,
            OfferFollowUp => self.offer_follow_up(path, change, scope)?,
            ClearFollowUp => self.clear_follow_up(path, change)?,
            SetExtension => self.set_extension(path, change)?,
            SetHomebrew => self.set_homebrew(path, change)?,
        };
        self.sync();
        Ok(record)
    }
}
