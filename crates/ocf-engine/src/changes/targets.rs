//! What a change is for: an entry by ID (a copy, or an applied entry), copies by query
//! (`copies: { type, where }` + `limit`), applied entries by query (`applied: { where, limit? }`).
//! Queries are resolved on the receiving character, each match's `item` and `self` bound (DA,
//! "Changes to copies by query", "Changes to applied entries by query").

use ocf_formula::Value;
use ocf_model::{Change, EntryQuery, EntryRef, Formula, Literal, Query};
use serde_json::json;

use super::applier::{Applier, type_mismatch};
use super::batch::ChangeError;
use super::eval::{OwnedSelf, Scope};
use crate::db::CopyInput;
use crate::input::CopyList;

/// An entry a change works on.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A copy in `features` or `inventory`, by instance ID.
    Copy(String),
    /// An entry of `applied`, by its index.
    Applied(usize),
    /// A pick (`pick: self` with its path and option, or `picks` by query).
    Pick(PickAt),
}

impl Applier<'_, '_> {
    /// The copy input with instance ID `id` (a standard copy included).
    pub fn copy_input(&self, id: &str) -> Option<CopyInput> {
        let c = self.input();
        let id = id.to_owned();
        self.deep(move |db| {
            c.inventory(db)
                .iter()
                .chain(c.features(db).iter())
                .find(|copy| *copy.id(db) == id)
                .copied()
        })
    }

    /// The file's copy with ID `id`, and whether it is in `inventory`. An unsaved standard copy
    /// is written into the file first, as the session's edits do: a change to it is saved.
    pub fn file_copy(&mut self, id: &str) -> Option<&mut ocf_model::CopyEntry> {
        let in_file = self
            .file
            .inventory
            .iter()
            .chain(self.file.features.iter())
            .any(|c| c.id == id);
        if !in_file {
            let copy = self.copy_input(id)?;
            let (entry, list) = self.deep(move |db| (copy.to_entry(db), copy.list(db)));
            match list {
                CopyList::Inventory => self.file.inventory.push(entry),
                CopyList::Features => self.file.features.push(entry),
            }
        }
        self.file
            .inventory
            .iter_mut()
            .chain(self.file.features.iter_mut())
            .find(|c| c.id == id)
    }

    /// An entry's instance ID: written, or a formula giving a non-empty string. `self` and
    /// `picked` are an action's, resolved before the batch reaches the character (EA, changes).
    pub fn entry_id(
        &self,
        entry: &EntryRef,
        scope: &Scope,
        path: &str,
    ) -> Result<String, ChangeError> {
        match entry {
            EntryRef::Named(name) => Ok(name.clone()),
            EntryRef::Formula { formula } => {
                self.eval_string(formula, scope, &format!("{path}/formula"))
            }
            EntryRef::New(_) => Err(ChangeError::new(
                "schema-error",
                path,
                "only `addItem` takes a new copy",
            )),
        }
    }

    /// The entry `entry` names: a copy, or (with `applied_too`) an applied entry by ID.
    /// Neither is `unknown-id` (EA: "checked by the receiver").
    pub fn resolve_entry(
        &mut self,
        entry: &EntryRef,
        scope: &Scope,
        path: &str,
        applied_too: bool,
    ) -> Result<Target, ChangeError> {
        let id = self.entry_id(entry, scope, path)?;
        if self.copy_input(&id).is_some() {
            return Ok(Target::Copy(id));
        }
        if applied_too && let Some(i) = self.file.applied.iter().position(|a| a.id == id) {
            return Ok(Target::Applied(i));
        }
        Err(unknown_id(path, &id))
    }

    /// `scope` with `item` and `self` the copy's.
    pub fn copy_scope(&self, base: &Scope, id: &str) -> Scope {
        let mut scope = base.clone();
        if let Some(copy) = self.copy_input(id) {
            let (item, templates) =
                self.deep(move |db| (copy.item(db).clone(), (**copy.templates(db)).clone()));
            scope.self_ref = OwnedSelf::Copy(copy);
            scope.item = Some((item, templates));
        }
        scope
    }

    /// `scope` with `item` the applied entry's source and `self` the entry (its ID and state with
    /// defaults).
    pub fn applied_scope(&self, base: &Scope, index: usize) -> Scope {
        let mut scope = base.clone();
        if let Some(entry) = self.file.applied.get(index) {
            scope.self_ref = OwnedSelf::Value(crate::view::applied_self(&self.ruleset, entry));
            scope.item = Some((entry.source.0.clone(), Vec::new()));
        }
        scope
    }

    pub fn target_scope(&self, base: &Scope, target: &Target) -> Scope {
        match target {
            Target::Copy(id) => self.copy_scope(base, id),
            Target::Applied(i) => self.applied_scope(base, *i),
            Target::Pick(at) => self.pick_scope(base, at),
        }
    }

    /// A `limit`: a non-negative integer.
    fn limit(
        &self,
        limit: Option<&Formula>,
        scope: &Scope,
        path: &str,
    ) -> Result<Option<usize>, ChangeError> {
        let Some(limit) = limit else { return Ok(None) };
        let n = self.eval_int(limit, scope, path)?;
        if n < 0 {
            return Err(type_mismatch(path, "a limit of 0 or more", &Value::Int(n)));
        }
        Ok(Some(n as usize))
    }

    /// The copies a `copies` query matches, inventory then features in file order, at most
    /// `limit` of them: each copy whose item is of the type (its qualified or local name) and
    /// whose `where` holds with `item` and `self` the copy's.
    pub fn query_copies(
        &mut self,
        query: &Query,
        limit: Option<&Formula>,
        scope: &Scope,
        path: &str,
    ) -> Result<Vec<String>, ChangeError> {
        let limit = self.limit(limit, scope, &format!("{path}/limit"))?;
        let c = self.input();
        let ids: Vec<(String, String)> = self.deep(move |db| {
            c.inventory(db)
                .iter()
                .chain(c.features(db).iter())
                .map(|copy| (copy.id(db).clone(), copy.item(db).clone()))
                .collect()
        });
        let wanted = query.r#type.as_str();
        let mut out = Vec::new();
        for (id, item) in ids {
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            let ty = self
                .ruleset
                .item(&item)
                .and_then(|e| e.type_name())
                .unwrap_or_default();
            if !type_is(ty, wanted) {
                continue;
            }
            if let Some(r#where) = &query.r#where {
                let scope = self.copy_scope(scope, &id);
                if !self.eval_bool(r#where, &scope, &format!("{path}/copies/where"))? {
                    continue;
                }
            }
            out.push(id);
        }
        Ok(out)
    }

    /// The applied entries an `applied` query matches, in file order, at most `limit`.
    pub fn query_applied(
        &mut self,
        query: &EntryQuery,
        scope: &Scope,
        path: &str,
    ) -> Result<Vec<usize>, ChangeError> {
        let limit = self.limit(
            query.limit.as_ref(),
            scope,
            &format!("{path}/applied/limit"),
        )?;
        let mut out = Vec::new();
        for i in 0..self.file.applied.len() {
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            let scope = self.applied_scope(scope, i);
            if self.eval_bool(&query.r#where, &scope, &format!("{path}/applied/where"))? {
                out.push(i);
            }
        }
        Ok(out)
    }

    /// The entries a copy or state change is for: `entry`, `copies` (+ `limit`), or (with
    /// `applied_too`) `applied`. A query that matches nothing is reported ([`Applier::soft`]);
    /// a change naming none of them is a `schema-error`.
    pub fn targets(
        &mut self,
        change: &Change,
        scope: &Scope,
        path: &str,
        applied_too: bool,
    ) -> Result<Vec<Target>, ChangeError> {
        if let Some(entry) = &change.entry {
            let target = self.resolve_entry(entry, scope, &format!("{path}/entry"), applied_too)?;
            return Ok(vec![target]);
        }
        let matched = if let Some(query) = &change.copies {
            self.query_copies(query, change.limit.as_ref(), scope, path)?
                .into_iter()
                .map(Target::Copy)
                .collect::<Vec<_>>()
        } else if let (true, Some(query)) = (applied_too, &change.applied) {
            self.query_applied(query, scope, path)?
                .into_iter()
                .map(Target::Applied)
                .collect()
        } else if applied_too && (change.pick.is_some() || change.picks.is_some()) {
            // A pick's target is checked (or the query reported) where it is resolved.
            return self.pick_targets(change, scope, path);
        } else {
            return Err(ChangeError::new(
                "schema-error",
                path,
                format!(
                    "a `{}` change names its `entry` or a query",
                    change.r#type.name()
                ),
            ));
        };
        if matched.is_empty() {
            self.soft(ChangeError::new(
                "no-match",
                path,
                "the query matches nothing; nothing changed",
            ))?;
        }
        Ok(matched)
    }

    pub fn target_id(&self, target: &Target) -> String {
        match target {
            Target::Copy(id) => id.clone(),
            Target::Applied(i) => self.file.applied[*i].id.clone(),
            Target::Pick(at) => serde_json::to_string(&at.to_json()).unwrap_or_default(),
        }
    }
}

/// A qualified content type matches its own name and its local name.
pub fn type_is(qualified: &str, wanted: &str) -> bool {
    qualified == wanted
        || qualified
            .split_once(':')
            .is_some_and(|(_, local)| local == wanted)
}

pub fn unknown_id(path: &str, id: &str) -> ChangeError {
    ChangeError::new(
        "unknown-id",
        path,
        format!("the character has no entry `{id}`"),
    )
    .with_data(json!({ "id": id }))
}

/// One pick in the file: the copy whose tree holds it (none: the rules-level choices), the full
/// path of its choice (choice keys alternating with picked options, the choice's key last), and
/// its option.
#[derive(Debug, Clone, PartialEq)]
pub struct PickAt {
    pub entry: Option<String>,
    pub path: Vec<String>,
    pub option: Literal,
}

impl PickAt {
    /// How records name the pick: `{ path: { entry?, choice }, option }`.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "path": crate::report::path_json(self.entry.as_deref(), &self.path),
            "option": self.option,
        })
    }
}
