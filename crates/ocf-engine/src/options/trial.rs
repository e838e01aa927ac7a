//! listOptions' trial sheets as edits that reach only what the pick changes.
//!
//! A trial sets one picks tree (the character's rules-level one, or a copy's), one input set and
//! so one new revision, and gives the fields whose effect instances that changes, compared with
//! their instances before any pick. The caller reads again only the fields those can reach
//! ([`super::reach`]), each from the character's effect index through its mask
//! ([`crate::db::fields_with_instances`]) and its own [`crate::db::field_effects`]
//! firewall; every other field keeps its base value, so no trial
//! re-checks the memos of the whole sheet.
//!
//! The tree is set at the [`STRUCTURE`] durability it has: a memo reading an input of lower
//! durability than its last value's can't be backdated, so a pick set at [`EDITED`] would make
//! every field list that reads the index (and every value over it) new, even when the pick leaves
//! it as it was.
//!
//! A ruleset whose items declare `standardCopies` or `keepsTemplates` can make a pick change the
//! standard copies, which the session works out from the file; its trials are edits of the held
//! file instead ([`Trials::begin`] gives `None`).

use std::sync::Arc;

use ocf_model::Picks;
use salsa::Setter;

use crate::db::{CharacterInput, CopyInput, effect_instances};
use crate::effects::ByField;
use crate::input::STRUCTURE;
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
    /// Each field's instances as the character's picks stand, without a trial's pick.
    base: Arc<ByField>,
}

impl Trials {
    /// Starts trials on the picks tree of copy `entry` (the character's own for `None`). `None`
    /// when the trials must be edits of the file (see the module's comment), or the copy isn't
    /// found.
    pub(crate) fn begin(
        session: &mut Session,
        id: CharacterId,
        entry: Option<&str>,
    ) -> Option<Trials> {
        let input = session.character_input(id)?;
        let db = session.db(id).ok()?;
        if crate::standard::needs_rounds(input.ruleset(db).ruleset(db)) {
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
        let mut trials = Trials {
            id,
            input,
            tree,
            original,
            base: Arc::default(),
        };
        trials.base = Arc::new(trials.index(session)?);
        Some(trials)
    }

    /// The character's effect instances by field, as the picks now stand.
    fn index(&self, session: &Session) -> Option<ByField> {
        let c = self.input;
        let by_field = session.deep(self.id, move |db| effect_instances(db, c).by_field.clone());
        by_field.ok()
    }

    /// The tree the trials pick in, as it was.
    pub(crate) fn original(&self) -> &Picks {
        &self.original
    }

    /// Makes `picks` the tree's, and gives the fields whose instances differ from those without
    /// a trial's pick (`None` when the character is gone).
    pub(crate) fn pick(&mut self, session: &mut Session, picks: Picks) -> Option<Vec<String>> {
        let db = session.db_mut(self.id).ok()?;
        self.tree.set(db, Arc::new(picks), STRUCTURE);
        // Compared where the index is, so that only the names of the few differing lists come
        // back.
        let (c, base) = (self.input, self.base.clone());
        session
            .deep(self.id, move |db| {
                let ruleset = c.ruleset(db).ruleset(db);
                effect_instances(db, c).by_field.differing(&base, ruleset)
            })
            .ok()
    }

    /// Puts the tree back.
    pub(crate) fn end(self, session: &mut Session) {
        if let Ok(db) = session.db_mut(self.id) {
            self.tree.set(db, self.original.clone(), STRUCTURE);
        }
    }
}
