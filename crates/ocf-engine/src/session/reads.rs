//! A session's reads: the sheet, what an edit changed in it, one field, the file held, and what
//! the databases store.

use crate::db::field_value;
use crate::db::{FieldKey, FieldValue};
use crate::sheet_changes::SheetChanges;
use ocf_model::Character;
use std::sync::Arc;

use super::{CharacterId, EditError, Session};

impl Session {
    /// The sheet: every field's value, the effects, activations and issues. Its
    /// [`Sheet::to_json`](crate::sheet::Sheet::to_json) is computeSheet's output.
    #[tracing::instrument(name = "session.sheet", level = "info", skip_all, fields(character = id.0))]
    pub fn sheet(&self, id: CharacterId) -> Result<crate::sheet::Sheet, EditError> {
        let open = self.get(id)?;
        if let Some((writes, sheet)) = &open.kept
            && *writes == open.writes
        {
            return Ok(sheet.clone());
        }
        let c = open.input;
        self.deep(id, move |db| crate::sheet::collect(db, c))
    }

    /// What changed on the sheet of `id` since the last call for it: the fields whose values
    /// changed and which other parts of the sheet changed ([`SheetChanges`]); the first call
    /// reports the sheet whole. Computes what the edits since then reached, and compares the
    /// memos it reads with those it reported by pointer: the cost follows what changed, not the
    /// sheet's size.
    #[tracing::instrument(name = "session.changes", level = "info", skip_all, fields(character = id.0))]
    pub fn changes(&mut self, id: CharacterId) -> Result<SheetChanges, EditError> {
        // The trials computeSheet's `no-eligible-option` derives in the database
        // ([`crate::option_trials`]) are given back as an action's proposed sheets are.
        self.reclaim(id)?;
        let c = self.get(id)?.input;
        if !self.homebrew_errors(id).is_empty() {
            let failed = self.sheet_json(id)?;
            return Ok(SheetChanges::failed(failed));
        }
        let now = self.deep(id, move |db| crate::sheet::parts(db, c))?;
        let before = self.get_mut(id)?.reported.replace(now.clone());
        Ok(match before {
            Some(old) => SheetChanges::between(&old, now),
            None => SheetChanges::whole(now),
        })
    }

    /// computeSheet's output, as JSON.
    pub fn sheet_json(&self, id: CharacterId) -> Result<serde_json::Value, EditError> {
        let errors = &self.get(id)?.homebrew_errors;
        if !errors.is_empty() {
            return Ok(serde_json::json!({
                "values": {},
                "competing": [],
                "effects": [],
                "activations": [],
                "offers": [],
                "issues": [],
                "errors": errors,
            }));
        }
        Ok(self.sheet(id)?.to_json())
    }

    /// One field's value, computing only what it reads.
    #[tracing::instrument(name = "session.field", level = "debug", skip_all, fields(character = id.0, field = field))]
    pub fn field(&self, id: CharacterId, field: &str) -> Result<Arc<FieldValue>, EditError> {
        let open = self.get(id)?;
        let c = open.input;
        // A name the ruleset doesn't declare (a client's, untrusted) is answered without a key: an
        // interned key made outside any query stays for the database's life (issue 19).
        if c.ruleset(&open.db).ruleset(&open.db).field(field).is_none() {
            return Ok(Arc::new(crate::field::unknown_field(field)));
        }
        let field = field.to_owned();
        self.deep(id, move |db| {
            let key = FieldKey::new(db, c, &*field);
            field_value(db, key).clone()
        })
    }

    /// How many memos and salsa structs (inputs, interned keys) the databases hold: what a long
    /// session must keep bounded. Waits for no one: the worker holds no database between calls.
    pub fn stored(&mut self) -> usize {
        self.records().total()
    }

    /// How many records the databases hold of each query's memos and of each salsa struct, by
    /// name, for finding what a long session keeps: `(name, count)`, sorted by name.
    pub fn records_by_name(&mut self) -> Vec<(String, usize)> {
        let mut named: std::collections::BTreeMap<String, usize> = Default::default();
        for open in self.open.iter_mut().flatten() {
            let info = (&mut open.db as &mut dyn salsa::Database).memory_usage();
            for (name, q) in &info.queries {
                *named.entry(name.to_string()).or_default() += q.count();
            }
            for s in &info.structs {
                *named.entry(s.debug_name().to_string()).or_default() += s.count();
            }
        }
        named.into_iter().collect()
    }

    /// The records the databases hold, by kind ([`Stored`]).
    pub fn records(&mut self) -> Stored {
        let mut stored = Stored::default();
        for open in self.open.iter_mut().flatten() {
            stored.free_slots += open.slots.free();
            let info = (&mut open.db as &mut dyn salsa::Database).memory_usage();
            stored.memos += info.queries.values().map(|q| q.count()).sum::<usize>();
            for s in &info.structs {
                if INPUTS.contains(&s.debug_name()) {
                    stored.inputs += s.count();
                } else {
                    stored.interned += s.count();
                }
            }
        }
        stored
    }

    /// The queries run since the last call, character after character (empty unless made
    /// [`Session::with_execution_log`]).
    pub fn take_executed(&self) -> Vec<String> {
        let open = self.open.iter().flatten();
        open.flat_map(|open| open.db.take_executed()).collect()
    }

    /// The memos checked and kept since the last call, character after character (empty unless
    /// made [`Session::with_execution_log`]).
    pub fn take_validated(&self) -> Vec<String> {
        let open = self.open.iter().flatten();
        open.flat_map(|open| open.db.take_validated()).collect()
    }

    /// The file an open character holds: as opened, with the session's edits, and no unsaved
    /// standard copy or kept template; what a player would save.
    pub fn file(&self, id: CharacterId) -> Result<&Character, EditError> {
        self.get(id).map(|open| &open.held.file)
    }
}

/// The salsa structs of [`crate::input`] that are inputs; the database's other structs are
/// interned keys.
const INPUTS: [&str; 4] = ["RulesetInput", "CopyInput", "SavedValue", "CharacterInput"];

/// The records a session's databases hold ([`Session::records`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stored {
    /// Memos of tracked functions (values, or the dependencies of an evicted value).
    pub memos: usize,
    /// Inputs: rulesets, characters, copies, saved values; the free slots among them.
    pub inputs: usize,
    /// Interned keys (field keys, the hidden keys of queries with several arguments).
    pub interned: usize,
    /// Inputs of removed copies waiting to be reused (counted in `inputs`).
    pub free_slots: usize,
}

impl Stored {
    /// Memos, inputs and interned keys.
    pub fn total(&self) -> usize {
        self.memos + self.inputs + self.interned
    }
}
