//! A session's edits: each sets the inputs it changes and no others (decisions.md,
//! "Durability"), the held file kept as a player would save it; a homebrew change reloads the
//! character, and a database whose derived characters outgrow it is rebuilt ([`Session::reclaim`]).

use crate::db::{CopyInput, Database};
use crate::input::CopyList;
use ocf_model::{AppliedEntry, Character, CopyEntry, Literal, PickEntry, Ruleset};
use salsa::Setter;
use std::sync::Arc;

use super::{CharacterId, EditError, Open, RECLAIM_AFTER, RECLAIM_FLOOR, Session};

impl Session {
    /// Sets (or, with `None`, clears) an input field's saved value: one input set (decisions.md,
    /// "Durability"). The held file saves it under the ID it was written with. Only when the
    /// character's ruleset has activation rounds can a value change its standard copies or kept
    /// templates (an activation condition reads input fields), and only then are they found again.
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_value", character = id.0, field = field))]
    pub fn set_value(
        &mut self,
        id: CharacterId,
        field: &str,
        value: Option<Literal>,
    ) -> Result<(), EditError> {
        let open = self.get_mut(id)?;
        let c = open.input;
        let ruleset = c.ruleset(&open.db).ruleset(&open.db).clone();
        let held = &mut open.held;
        // A bare field ID resolves as the file's keys do (decisions.md, "Saved values by bare ID").
        let field = crate::input::qualify_saved(&ruleset, &held.file, field);
        let file = &held.file;
        // The key as written: the qualified ID itself most often (found without a walk of every
        // saved value, whose cost would grow with the sheet), else a bare ID resolving to it.
        let key = if file.values.0.contains_key(&field) {
            field.clone()
        } else {
            file.values
                .0
                .keys()
                .find(|written| crate::input::qualify_saved(&ruleset, file, written) == field)
                .cloned()
                .unwrap_or_else(|| field.clone())
        };
        let takes = |v: &Literal| crate::file_check::takes_saved(&ruleset, &field, v);
        // A value the engines don't take (an unknown or derived field's, one of the wrong type) is
        // an error of the file and is left out, as a fresh open would (crate::file_check): the
        // file's errors are found again when the edit makes or mends one.
        let mended = held.file.values.get(&key).is_some_and(|old| !takes(old));
        let broken = value.as_ref().is_some_and(|v| !takes(v));
        match &value {
            Some(value) => {
                held.file.values.0.insert(key, value.clone());
            }
            None => {
                held.file.values.0.shift_remove(&key);
            }
        }
        let rounds = held.rounds;
        c.save_value(&mut open.db, &field, value.filter(|v| takes(v)));
        if rounds || mended || broken {
            open.sync_structure();
        }
        Ok(())
    }

    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "add_copy", character = id.0))]
    pub fn add_copy(
        &mut self,
        id: CharacterId,
        list: CopyList,
        entry: &CopyEntry,
    ) -> Result<(), EditError> {
        self.get_mut(id)?.edit_file(|file, _| {
            match list {
                CopyList::Features => file.features.push(entry.clone()),
                CopyList::Inventory => file.inventory.push(entry.clone()),
            }
            Ok(())
        })
    }

    /// Removes a copy from the file. An unsaved standard copy can't be removed: it is there while
    /// the content holding it is active ([`EditError::StandardCopy`]).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "remove_copy", character = id.0))]
    pub fn remove_copy(&mut self, id: CharacterId, copy_id: &str) -> Result<(), EditError> {
        self.get_mut(id)?.edit_file(|file, unsaved| {
            for list in [&mut file.features, &mut file.inventory] {
                if let Some(pos) = list.iter().position(|x| x.id == copy_id) {
                    list.remove(pos);
                    return Ok(());
                }
            }
            Err(match unsaved(copy_id) {
                Some(_) => EditError::StandardCopy(copy_id.to_owned()),
                None => EditError::UnknownCopy(copy_id.to_owned()),
            })
        })
    }

    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "equip", character = id.0))]
    pub fn equip(
        &mut self,
        id: CharacterId,
        copy_id: &str,
        equipped: bool,
    ) -> Result<(), EditError> {
        self.get_mut(id)?.edit_copy(copy_id, |entry| {
            // Unequipping writes `false` only where the file wrote the flag.
            entry.equipped = if equipped {
                Some(true)
            } else {
                entry.equipped.map(|_| false)
            };
        })
    }

    /// Sets one state key of a copy (`None` removes it).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_state", character = id.0))]
    pub fn set_state(
        &mut self,
        id: CharacterId,
        copy_id: &str,
        key: &str,
        value: Option<Literal>,
    ) -> Result<(), EditError> {
        self.get_mut(id)?.edit_copy(copy_id, |entry| match value {
            Some(v) => {
                entry.state.0.insert(key.to_owned(), v);
            }
            None => {
                entry.state.0.shift_remove(key);
            }
        })
    }

    /// Replaces the picks of a choice: a copy's (`copy_id`), or a rules-level one (`None`).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "pick", character = id.0))]
    pub fn pick(
        &mut self,
        id: CharacterId,
        copy_id: Option<&str>,
        choice: &str,
        picks: Vec<PickEntry>,
    ) -> Result<(), EditError> {
        let update = |tree: &mut ocf_model::Picks| {
            if picks.is_empty() {
                tree.0.shift_remove(choice);
            } else {
                tree.0.insert(choice.to_owned(), picks.clone());
            }
        };
        let open = self.get_mut(id)?;
        match copy_id {
            Some(copy_id) => open.edit_copy(copy_id, |entry| update(&mut entry.choices)),
            None => open.edit_file(|file, _| {
                update(&mut file.choices);
                Ok(())
            }),
        }
    }

    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_applied", character = id.0))]
    pub fn set_applied(
        &mut self,
        id: CharacterId,
        applied: Vec<AppliedEntry>,
    ) -> Result<(), EditError> {
        self.get_mut(id)?.edit_file(|file, _| {
            file.applied = applied;
            Ok(())
        })
    }

    /// The views passed for link slots (`{ slot: { id, values } }`), replacing earlier ones. They
    /// are the call's, not the file's: the held file keeps its saved links.
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_links", character = id.0))]
    pub fn set_links(
        &mut self,
        id: CharacterId,
        links: serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), EditError> {
        let open = self.get_mut(id)?;
        let c = open.input;
        let links: rustc_hash::FxHashMap<String, serde_json::Value> = links.into_iter().collect();
        if **c.passed_links(&open.db) != links {
            c.set_passed_links(&mut open.db).to(Arc::new(links));
        }
        Ok(())
    }

    /// Replaces the picks among competing options (the file's and the call's at open).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "set_competing", character = id.0))]
    pub fn set_competing(&mut self, id: CharacterId, picks: Vec<String>) -> Result<(), EditError> {
        self.get_mut(id)?.edit_file(|file, _| {
            file.competing = picks;
            Ok(())
        })
    }

    /// Brings an open character to `file`, setting only the inputs that differ: a saved value, a
    /// copy's property, a list, the applied entries, the picks. What `ocf watch` calls on each save.
    /// A changed `homebrew` reloads the character ([`Session::reload_homebrew`]).
    #[tracing::instrument(name = "session.edit", level = "info", skip_all, fields(edit = "update", character = id.0))]
    pub fn update(&mut self, id: CharacterId, file: &Character) -> Result<(), EditError> {
        let open = self.get(id)?;
        if open.held.file.homebrew != file.homebrew
            || open.held.file.spec_version != file.spec_version
        {
            self.reload_homebrew(id, file);
            return Ok(());
        }
        self.get_mut(id)?.update(file);
        Ok(())
    }

    /// Puts `file` in place of character `id` on its new homebrew, loaded as [`Session::open`]
    /// loads it, with its `homebrew-error`s when it fails (decisions.md, "`Session::open` loads
    /// the character's homebrew"). Every input of the character hangs on its ruleset (the
    /// copies', the saved values' resolution, the standard copies), so the character is loaded
    /// afresh in a new database, keeping only its passed links; the session's other characters
    /// are untouched.
    pub(super) fn reload_homebrew(&mut self, id: CharacterId, file: &Character) {
        let Ok(old) = self.get(id) else {
            return;
        };
        let links = old.input.passed_links(&old.db).clone();
        let mut open = self.load(file.clone());
        if !links.is_empty() {
            open.input.set_passed_links(&mut open.db).to(links);
        }
        self.open[id.index()] = Some(open);
    }

    /// Gives back what the characters derived in character `id`'s database left there (an
    /// action's proposed sheets, [`crate::db::CharacterInput::derive`]) once they outgrow the
    /// character: salsa never frees an input, so the character is loaded afresh in a new
    /// database from the file it holds, with its passed links and the sheet [`Session::changes`]
    /// last reported. Its memos go with the old database: the next read computes the sheet
    /// again, once per [`RECLAIM_AFTER`] times the character's own inputs. Whether it did; a
    /// [`CharacterInput`] of the character taken before is then stale
    /// ([`Session::character_input`] gives the new one).
    pub fn reclaim(&mut self, id: CharacterId) -> Result<bool, EditError> {
        let open = self.get(id)?;
        let file = &open.held.file;
        let own = 1 + file.values.len() + file.inventory.len() + file.features.len();
        if open.db.derived() <= RECLAIM_AFTER * own.max(RECLAIM_FLOOR) {
            return Ok(false);
        }
        let _span = tracing::info_span!(
            "session.reclaim",
            character = id.0,
            derived = open.db.derived()
        )
        .entered();
        let reported = open.reported.clone();
        let file = file.clone();
        let old = open.db.clone();
        self.reload_homebrew(id, &file);
        if let Ok(open) = self.get_mut(id) {
            open.reported = reported;
            // What a caller kept for the character (an action's proposed-sheet session) is
            // still the character's: the file is the same.
            old.pass_kept(&open.db);
        }
        Ok(true)
    }
}

impl Open {
    /// Brings the inputs to `file` (on the same homebrew), setting only those that differ.
    pub(super) fn update(&mut self, file: &Character) {
        let c = self.input;
        let ruleset = c.ruleset(&self.db).ruleset(&self.db).clone();
        if let Some(changed) = values_only_edit(&ruleset, &self.held.file, file) {
            // The same file (a batch's closing sync after its last change's): nothing to set.
            if changed.is_empty() {
                return;
            }
            // Everything but the values is the same (values_only_edit compared it): the held file
            // takes the new values alone, not a copy of the whole file (its copies, applied entries).
            self.held.file.values = file.values.clone();
            for (field, new) in changed {
                let now = c
                    .saved(&self.db)
                    .get(&field)
                    .and_then(|h| h.value(&self.db).clone());
                if now != new {
                    c.save_value(&mut self.db, &field, new);
                }
            }
            return;
        }
        self.held.file = file.clone();
        // Saved values: every field saved before or now.
        let mut wanted: rustc_hash::FxHashMap<String, Literal> = Default::default();
        for (field, value) in file.values.iter() {
            let key = crate::input::qualify_saved(&ruleset, file, field);
            wanted.insert(key, value.clone());
        }
        let mut fields: Vec<String> = c.saved(&self.db).keys().cloned().collect();
        fields.extend(wanted.keys().cloned());
        fields.sort();
        fields.dedup();
        for field in fields {
            let now = c
                .saved(&self.db)
                .get(&field)
                .and_then(|h| h.value(&self.db).clone());
            // What the engines don't take is left out, as at open (crate::file_check).
            let new = wanted
                .get(&field)
                .filter(|v| crate::file_check::takes_saved(&ruleset, &field, v))
                .cloned();
            if now != new {
                c.save_value(&mut self.db, &field, new);
            }
        }
        self.sync_structure();
    }

    /// Edits the held file with `edit` (given the file, and a look-up of the unsaved standard
    /// copies by ID), then brings the inputs to it.
    pub(super) fn edit_file(
        &mut self,
        edit: impl FnOnce(
            &mut Character,
            &dyn Fn(&str) -> Option<(CopyList, String)>,
        ) -> Result<(), EditError>,
    ) -> Result<(), EditError> {
        let c = self.input;
        let db = &self.db;
        let held = &mut self.held;
        // The inputs hold the file's copies and the unsaved standard copies: a copy the inputs
        // hold and the file doesn't is an unsaved standard copy.
        let saved: rustc_hash::FxHashSet<String> = held
            .file
            .features
            .iter()
            .chain(&held.file.inventory)
            .map(|e| e.id.clone())
            .collect();
        let unsaved = |copy_id: &str| {
            if saved.contains(copy_id) {
                return None;
            }
            c.features(db)
                .iter()
                .chain(c.inventory(db).iter())
                .find(|x| x.id(db) == copy_id)
                .map(|x| (x.list(db), x.item(db).clone()))
        };
        edit(&mut held.file, &unsaved)?;
        self.sync_structure();
        Ok(())
    }

    /// Edits a copy's entry in the held file. An edit of an unsaved standard copy saves it: its
    /// entry `{ id, item }` goes after the file's entries of its list, where it already stands
    /// (EC: "An entry with a standard copy's ID and item is that copy, saved, in its place").
    pub(super) fn edit_copy(
        &mut self,
        copy_id: &str,
        edit: impl FnOnce(&mut CopyEntry),
    ) -> Result<(), EditError> {
        self.edit_file(|file, unsaved| {
            let found = file
                .features
                .iter_mut()
                .chain(file.inventory.iter_mut())
                .find(|x| x.id == copy_id);
            if let Some(entry) = found {
                edit(entry);
                return Ok(());
            }
            let (list, item) =
                unsaved(copy_id).ok_or_else(|| EditError::UnknownCopy(copy_id.to_owned()))?;
            let mut entry = CopyEntry::new(copy_id.to_owned(), item.as_str());
            edit(&mut entry);
            match list {
                CopyList::Features => file.features.push(entry),
                CopyList::Inventory => file.inventory.push(entry),
            }
            Ok(())
        })
    }

    /// Brings the character's inputs, all but its saved values, to its held file as the engines
    /// see it: with its standard copies and kept templates, found in rounds on the file as it now
    /// is (EC, "Standard copies"). Sets only what differs, so an edit that changes nothing else
    /// invalidates nothing else.
    pub(super) fn sync_structure(&mut self) {
        let c = self.input;
        let ruleset_input = c.ruleset(&self.db);
        let ruleset = ruleset_input.ruleset(&self.db).clone();
        let crate::standard::StandardView {
            character: file,
            errors,
            kept,
        } = crate::load::view(&ruleset, &self.held.file);
        if **c.errors(&self.db) != errors {
            c.set_errors(&mut self.db).to(Arc::new(errors));
        }
        if **c.kept(&self.db) != kept {
            c.set_kept(&mut self.db).to(Arc::new(kept));
        }
        // Copies: reuse each copy by its instance ID and item, setting only what changed.
        for (list, entries) in [
            (CopyList::Features, &file.features),
            (CopyList::Inventory, &file.inventory),
        ] {
            let old = match list {
                CopyList::Features => c.features(&self.db).clone(),
                CopyList::Inventory => c.inventory(&self.db).clone(),
            };
            // Each old copy is reused once, by the first entry with its ID and item; the copies
            // left over are removed, and their inputs serve the entries that are new.
            let mut reusable: rustc_hash::FxHashMap<(String, String), Vec<CopyInput>> =
                Default::default();
            for copy in old.iter().rev() {
                let key = (copy.id(&self.db).clone(), copy.item(&self.db).clone());
                reusable.entry(key).or_default().push(*copy);
            }
            let mut copies = Vec::with_capacity(entries.len());
            let mut changed = Vec::new();
            let mut new = Vec::new();
            for (index, entry) in entries.iter().enumerate() {
                let key = (entry.id.clone(), entry.item.0.clone());
                match reusable.get_mut(&key).and_then(Vec::pop) {
                    Some(copy) => {
                        changed.push((copy, entry));
                        copies.push(Some(copy));
                    }
                    None => {
                        new.push((index, entry));
                        copies.push(None);
                    }
                }
            }
            for copy in reusable.into_values().flatten() {
                self.slots.free_copy(copy);
            }
            for (copy, entry) in changed {
                sync_copy(&mut self.db, copy, entry);
            }
            for (index, entry) in new {
                copies[index] = Some(self.slots.copy(&mut self.db, ruleset_input, list, entry));
            }
            let copies: Vec<CopyInput> = copies.into_iter().flatten().collect();
            if *old != copies {
                match list {
                    CopyList::Features => c.set_features(&mut self.db).to(Arc::new(copies)),
                    CopyList::Inventory => c.set_inventory(&mut self.db).to(Arc::new(copies)),
                };
            }
        }
        if **c.applied(&self.db) != file.applied {
            c.set_applied(&mut self.db)
                .to(Arc::new(file.applied.clone()));
        }
        if **c.choices(&self.db) != file.choices {
            c.set_choices(&mut self.db)
                .to(Arc::new(file.choices.clone()));
        }
        if **c.competing(&self.db) != file.competing {
            c.set_competing(&mut self.db)
                .to(Arc::new(file.competing.clone()));
        }
        let saved_links: rustc_hash::FxHashMap<String, String> = file
            .links
            .iter()
            .map(|(k, v)| (k.to_owned(), v.clone()))
            .collect();
        if **c.saved_links(&self.db) != saved_links {
            c.set_saved_links(&mut self.db).to(Arc::new(saved_links));
        }
        if **c.follow_ups(&self.db) != file.follow_ups {
            c.set_follow_ups(&mut self.db)
                .to(Arc::new(file.follow_ups.clone()));
        }
        let creating = file.creating.unwrap_or(false);
        if c.creating(&self.db) != creating {
            c.set_creating(&mut self.db).to(creating);
        }
    }
}

/// Sets each property of `copy` that differs from `entry`'s.
fn sync_copy(db: &mut Database, copy: CopyInput, entry: &CopyEntry) {
    let equipped = entry.equipped.unwrap_or(false);
    if copy.equipped(db) != equipped {
        copy.set_equipped(db).to(equipped);
    }
    let quantity = entry.quantity.unwrap_or(1);
    if copy.quantity(db) != quantity {
        copy.set_quantity(db).to(quantity);
    }
    if **copy.state(db) != entry.state {
        copy.set_state(db).to(Arc::new(entry.state.clone()));
    }
    let templates: Vec<String> = entry.templates.iter().map(|t| t.0.clone()).collect();
    if **copy.templates(db) != templates {
        copy.set_templates(db).to(Arc::new(templates));
    }
    if **copy.choices(db) != entry.choices {
        copy.set_choices(db).to(Arc::new(entry.choices.clone()));
    }
}

/// When `new` differs from the held file `old` only in saved values, each of them a value the
/// engines take before and after (so the file's errors and everything but those values stay as
/// they are): the changed fields, qualified, with their new values. `None` when the edit needs
/// [`Session::update`]'s full diff: anything else changed, or a changed key shares its field with
/// another key of the file (the full diff decides which one counts). An applyChanges batch of
/// adjusts and sets edits this way, so its cost follows the values it touched (issue 12).
fn values_only_edit(
    ruleset: &Ruleset,
    old: &Character,
    new: &Character,
) -> Option<Vec<(String, Option<Literal>)>> {
    let Character {
        id,
        spec_version,
        packs,
        creating,
        values: _,
        features,
        inventory,
        applied,
        choices,
        competing,
        links,
        follow_ups,
        homebrew,
        extensions,
    } = new;
    let same = *id == old.id
        && *spec_version == old.spec_version
        && *packs == old.packs
        && *creating == old.creating
        && *features == old.features
        && *inventory == old.inventory
        && *applied == old.applied
        && *choices == old.choices
        && *competing == old.competing
        && *links == old.links
        && *follow_ups == old.follow_ups
        && *homebrew == old.homebrew
        && *extensions == old.extensions;
    if !same {
        return None;
    }
    let keys = old
        .values
        .0
        .keys()
        .filter(|k| new.values.0.get(*k) != old.values.0.get(*k))
        .chain(
            new.values
                .0
                .keys()
                .filter(|k| !old.values.0.contains_key(*k)),
        );
    let mut changed = Vec::new();
    for key in keys {
        let field = crate::input::qualify_saved(ruleset, new, key);
        let alias = match field.split_once(':') {
            Some((_, local)) if *key == field => local,
            _ => field.as_str(),
        };
        if alias != key && (old.values.0.contains_key(alias) || new.values.0.contains_key(alias)) {
            return None;
        }
        let value = new.values.0.get(key);
        let takes = |v: Option<&Literal>| {
            v.is_none_or(|v| crate::file_check::takes_saved(ruleset, &field, v))
        };
        if !takes(old.values.0.get(key)) || !takes(value) {
            return None;
        }
        changed.push((field, value.cloned()));
    }
    Some(changed)
}
