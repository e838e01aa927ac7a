//! listOptions' trial sheets as edits that reach only what the pick changes.
//!
//! A trial sets one picks tree (the character's rules-level one, or a copy's) and reads the sheet.
//! Every field reads its effect instances from one index that any pick changes, so made as an
//! ordinary edit, a trial would have salsa re-check every field of the sheet. Instead, for the
//! length of one listOptions, each field reads its instances from its own input, its
//! [`EffectsOverlay`], and the trials set only the overlays of the fields whose instances a pick
//! changes:
//! - the picks tree and those overlays are set at [`EDITED`] durability, so the fields no pick
//!   reaches don't re-run. Their memos are still re-checked: salsa counts a set as a change at the
//!   durability the input had, and an overlay's first set in a call is from [`STRUCTURE`];
//! - at the end the tree is put back and the overlays cleared, at [`STRUCTURE`], so the character's
//!   later edits cost what they did.
//!
//! A ruleset whose items declare `standardCopies` or `keepsTemplates` can make a pick change the
//! standard copies, which the session works out from the file; its trials are edits of the held
//! file instead ([`Trials::begin`] gives `None`).

use std::sync::Arc;

use ocf_model::Picks;
use rustc_hash::{FxHashMap, FxHashSet};
use salsa::Setter;

use crate::effects::{FieldInstances, Instance, effect_instances};
use crate::input::{CharacterInput, CopyInput, EDITED, EffectsOverlay, STRUCTURE};
use crate::session::{CharacterId, Session};

/// Where the trials' picks go.
#[derive(Clone, Copy)]
enum Tree {
    Rules(CharacterInput),
    Copy(CopyInput),
}

impl Tree {
    fn get(self, db: &dyn salsa::Database) -> Arc<Picks> {
        match self {
            Tree::Rules(c) => c.choices(db).clone(),
            Tree::Copy(copy) => copy.choices(db).clone(),
        }
    }

    fn set(self, db: &mut dyn salsa::Database, picks: Arc<Picks>, d: salsa::Durability) {
        match self {
            Tree::Rules(c) => {
                c.set_choices(db).with_durability(d).to(picks);
            }
            Tree::Copy(copy) => {
                copy.set_choices(db).with_durability(d).to(picks);
            }
        }
    }
}

/// The trials of one listOptions on one picks tree.
pub(crate) struct Trials {
    id: CharacterId,
    input: CharacterInput,
    tree: Tree,
    /// The tree as it was, put back at the end.
    original: Arc<Picks>,
    handles: Arc<FxHashMap<String, EffectsOverlay>>,
    /// The fields whose overlay the last trial set to other instances than their own.
    held: FxHashSet<String>,
    /// Each field's instances as the character's picks stand, without a trial's pick.
    base: Arc<FxHashMap<String, Vec<Arc<Instance>>>>,
}

impl Trials {
    /// Starts trials on the picks tree of copy `entry` (the character's own for `None`): every
    /// field's overlay set to its instances now. `None` when the trials must be edits of the file
    /// (see the module's comment), or the copy isn't found.
    pub(crate) fn begin(
        session: &mut Session,
        id: CharacterId,
        entry: Option<&str>,
    ) -> Option<Trials> {
        let input = session.character_input(id)?;
        let db = session.db(id).ok()?;
        let ruleset = input.ruleset(db).ruleset(db).clone();
        if crate::standard::needs_rounds(&ruleset) {
            return None;
        }
        let tree = match entry {
            None => Tree::Rules(input),
            Some(entry) => Tree::Copy(
                *input
                    .features(db)
                    .iter()
                    .chain(input.inventory(db).iter())
                    .find(|c| c.id(db) == entry)?,
            ),
        };
        let original = tree.get(db);
        // One handle per field, made at the character's first listOptions and kept until it
        // closes (or its ruleset's fields change), then given back to the session's free slots.
        let fits = {
            let overlays = input.overlays(db);
            overlays.len() == ruleset.fields.len()
                && ruleset.fields.iter().all(|(f, _)| overlays.contains_key(f))
        };
        if !fits {
            session.free_overlays(id);
            let handles: FxHashMap<String, EffectsOverlay> = ruleset
                .fields
                .iter()
                .map(|(f, _)| Some((f.to_owned(), session.overlay(id)?)))
                .collect::<Option<_>>()?;
            input
                .set_overlays(session.db_mut(id).ok()?)
                .with_durability(STRUCTURE)
                .to(Arc::new(handles));
        }
        let handles = input.overlays(session.db(id).ok()?).clone();
        let mut trials = Trials {
            id,
            input,
            tree,
            original,
            handles,
            held: FxHashSet::default(),
            base: Arc::default(),
        };
        let by_field = trials.index(session)?;
        let empty = FieldInstances::default();
        let db = session.db_mut(id).ok()?;
        for (field, handle) in trials.handles.iter() {
            let list = by_field
                .get(field)
                .map_or_else(|| empty.clone(), |l| FieldInstances(l.clone()));
            handle
                .set_list(db)
                .with_durability(STRUCTURE)
                .to(Some(list));
        }
        trials.base = Arc::new(by_field);
        Some(trials)
    }

    /// The character's effect instances by field, as the picks now stand.
    fn index(&self, session: &Session) -> Option<FxHashMap<String, Vec<Arc<Instance>>>> {
        let c = self.input;
        let by_field = session.deep(self.id, move |db| effect_instances(db, c).by_field.clone());
        by_field.ok()
    }

    /// The tree the trials pick in, as it was.
    pub(crate) fn original(&self) -> &Picks {
        &self.original
    }

    /// Makes `picks` the tree's, and sets the overlays of the fields whose instances that
    /// changes (and of those the last trial changed, back to their own). Gives the fields whose
    /// instances differ from those without a trial's pick (`None` when the character is gone).
    pub(crate) fn pick(&mut self, session: &mut Session, picks: Picks) -> Option<Vec<String>> {
        let db = session.db_mut(self.id).ok()?;
        self.tree.set(db, Arc::new(picks), EDITED);
        // Compared where the index is, so that only the few differing lists come back.
        let (c, base) = (self.input, self.base.clone());
        let differ = session
            .deep(self.id, move |db| {
                let by_field = &effect_instances(db, c).by_field;
                let same = |a: Option<&Vec<Arc<Instance>>>, b: Option<&Vec<Arc<Instance>>>| {
                    let (a, b) = (a.map_or(&[][..], |l| l), b.map_or(&[][..], |l| l));
                    crate::effects::same_in_place(a, b)
                };
                let mut differ: Vec<(String, Vec<Arc<Instance>>)> = by_field
                    .iter()
                    .filter(|(f, list)| !same(Some(list), base.get(*f)))
                    .map(|(f, list)| (f.clone(), list.clone()))
                    .collect();
                differ.extend(
                    base.keys()
                        .filter(|f| !by_field.contains_key(*f))
                        .map(|f| (f.clone(), Vec::new())),
                );
                differ
            })
            .ok()?;
        let db = session.db_mut(self.id).ok()?;
        let mut set = |field: &str, list: Vec<Arc<Instance>>| {
            if let Some(handle) = self.handles.get(field) {
                let list = FieldInstances(list);
                if handle.list(&*db).as_ref() != Some(&list) {
                    handle.set_list(db).with_durability(EDITED).to(Some(list));
                }
            }
        };
        let fields: Vec<String> = differ.iter().map(|(f, _)| f.clone()).collect();
        let now: FxHashSet<String> = fields.iter().cloned().collect();
        for field in self.held.iter().filter(|f| !now.contains(*f)) {
            set(field, self.base.get(field).cloned().unwrap_or_default());
        }
        for (field, list) in differ {
            set(&field, list);
        }
        self.held = now;
        Some(fields)
    }

    /// Puts the tree back and clears the overlays, at the character's structure durability.
    pub(crate) fn end(self, session: &mut Session) {
        let Ok(db) = session.db_mut(self.id) else {
            return;
        };
        self.tree.set(db, self.original.clone(), STRUCTURE);
        for handle in self.handles.values() {
            handle.set_list(db).with_durability(STRUCTURE).to(None);
        }
    }
}
