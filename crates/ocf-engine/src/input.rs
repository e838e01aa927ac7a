//! The database's inputs: the ruleset, and a character split so that one edit touches one input.
//!
//! A character is a [`CharacterInput`] whose fields salsa tracks one by one, plus one [`CopyInput`]
//! per copy and one [`SavedValue`] per input field. Setting a saved value, equipping a copy or
//! editing the `applied` list therefore invalidates only the queries that read that one thing.
//!
//! Durability (decisions.md, "Durability"): the ruleset is [`Durability::HIGH`]; a character's
//! structure (its lists, copies, applied entries, picks, links) and its saved values as opened are
//! [`STRUCTURE`]; a saved value becomes [`EDITED`] at its first edit. After an edit of a value
//! edited before, salsa re-verifies only the memos that read an edited value: the rest of the
//! sheet, the activations, the effect lists and parsed formulas pass on a durability check alone.

use std::sync::Arc;

use ocf_model::{AppliedEntry, Character, CopyEntry, Literal, Picks, Ruleset};
use rustc_hash::FxHashMap;
use salsa::{Durability, Setter};

/// The durability of a character's structure, and of its saved values until they are edited: a
/// character's lists, copies, applied entries and picks change less often than its values, and
/// most of its values are never edited in a session.
pub const STRUCTURE: Durability = Durability::MEDIUM;

/// The durability of a saved value from its first edit on: what a player edits, they edit again
/// (hit points, a score being typed). Its first edit re-runs every memo that reads it, once,
/// without backdating (salsa backdates a memo only if its durability didn't drop); from then on,
/// an edit of it re-verifies only the memos that read an edited value, not the whole sheet.
pub const EDITED: Durability = Durability::LOW;

/// The loaded ruleset. Set with [`Durability::HIGH`]: it changes only when packs are reloaded, so
/// salsa can skip re-validating everything that reads only the ruleset after a character edit.
#[salsa::input(debug)]
pub struct RulesetInput {
    #[returns(ref)]
    pub ruleset: Arc<Ruleset>,
}

impl RulesetInput {
    pub fn load(db: &dyn salsa::Database, ruleset: Arc<Ruleset>) -> RulesetInput {
        RulesetInput::builder(ruleset)
            .durability(Durability::HIGH)
            .new(db)
    }
}

/// Which list of the character file a copy is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyList {
    Features,
    Inventory,
}

/// One copy (an entry of `features` or `inventory`). Each property is its own tracked field, so
/// equipping a shield does not invalidate what reads only the shield's state.
#[salsa::input(debug)]
pub struct CopyInput {
    #[returns(copy)]
    pub ruleset: RulesetInput,
    #[returns(copy)]
    pub list: CopyList,
    #[returns(ref)]
    pub id: String,
    /// The content ID as saved.
    #[returns(ref)]
    pub item: String,
    #[returns(copy)]
    pub equipped: bool,
    #[returns(copy)]
    pub quantity: u64,
    #[returns(ref)]
    pub state: Arc<ocf_model::Keyed<Literal>>,
    #[returns(ref)]
    pub templates: Arc<Vec<String>>,
    #[returns(ref)]
    pub choices: Arc<Picks>,
}

impl CopyInput {
    /// A copy, part of the character's [`STRUCTURE`].
    pub fn from_entry(
        db: &dyn salsa::Database,
        ruleset: RulesetInput,
        list: CopyList,
        entry: &CopyEntry,
    ) -> CopyInput {
        CopyInput::builder(
            ruleset,
            list,
            entry.id.clone(),
            entry.item.0.clone(),
            entry.equipped.unwrap_or(false),
            entry.quantity.unwrap_or(1),
            Arc::new(entry.state.clone()),
            Arc::new(entry.templates.iter().map(|t| t.0.clone()).collect()),
            Arc::new(entry.choices.clone()),
        )
        .durability(STRUCTURE)
        .new(db)
    }

    /// The copy as the character file writes it.
    pub fn to_entry(self, db: &dyn salsa::Database) -> CopyEntry {
        CopyEntry {
            id: self.id(db).clone(),
            item: self.item(db).as_str().into(),
            equipped: self.equipped(db).then_some(true),
            quantity: (self.quantity(db) != 1).then(|| self.quantity(db)),
            state: (**self.state(db)).clone(),
            templates: self
                .templates(db)
                .iter()
                .map(|t| t.as_str().into())
                .collect(),
            choices: (**self.choices(db)).clone(),
        }
    }
}

/// The saved value of one input field (`None`: not saved, the field reads its default).
#[salsa::input(debug)]
pub struct SavedValue {
    #[returns(ref)]
    pub value: Option<Literal>,
}

impl SavedValue {
    /// A saved value of a character being opened: [`STRUCTURE`] until its first edit.
    pub fn loaded(db: &dyn salsa::Database, value: Option<Literal>) -> SavedValue {
        SavedValue::builder(value).durability(STRUCTURE).new(db)
    }
}

/// A character. Its lists hold handles to the smaller inputs above; a list changes only when a copy
/// is added or removed, or a field is saved for the first time.
#[salsa::input(debug)]
pub struct CharacterInput {
    #[returns(copy)]
    pub ruleset: RulesetInput,
    #[returns(ref)]
    pub id: String,
    #[returns(copy)]
    pub creating: bool,
    /// Saved values by field ID (as written in the file: qualified, or bare and resolved in the
    /// pinned packs). Every input field the ruleset declares has a handle, saved or not, so a first
    /// save changes one [`SavedValue`] and not this map.
    #[returns(ref)]
    pub saved: Arc<FxHashMap<String, SavedValue>>,
    #[returns(ref)]
    pub features: Arc<Vec<CopyInput>>,
    #[returns(ref)]
    pub inventory: Arc<Vec<CopyInput>>,
    #[returns(ref)]
    pub applied: Arc<Vec<AppliedEntry>>,
    /// Picks of rules-level choices.
    #[returns(ref)]
    pub choices: Arc<Picks>,
    /// Picks among competing options: the file's `competing`, then the call's.
    #[returns(ref)]
    pub competing: Arc<Vec<String>>,
    /// The file's saved links: slot ID to the linked character's ID.
    #[returns(ref)]
    pub saved_links: Arc<FxHashMap<String, String>>,
    /// The views passed for link slots: slot ID to `{ id, values }`.
    #[returns(ref)]
    pub passed_links: Arc<FxHashMap<String, serde_json::Value>>,
    /// Errors found while reading the file as the engines see it (`duplicate-id`).
    #[returns(ref)]
    pub errors: Arc<Vec<serde_json::Value>>,
    /// The stored (ephemeral) follow-up offers, in file order.
    #[returns(ref)]
    pub follow_ups: Arc<Vec<ocf_model::StoredOffer>>,
    /// The templates content keeps on copies, `(copy instance ID, template)`, as
    /// [`crate::standard::StandardView::kept`].
    #[returns(ref)]
    pub kept: Arc<Vec<(String, String)>>,
}

impl CharacterInput {
    /// Splits `character` into inputs of `db`.
    pub fn load(
        db: &dyn salsa::Database,
        ruleset: RulesetInput,
        character: &Character,
        competing: &[String],
    ) -> CharacterInput {
        let rules = ruleset.ruleset(db).clone();
        let view = crate::standard::standard_view(&rules, character);
        CharacterInput::load_as_is(
            db,
            ruleset,
            &view.character,
            competing,
            view.errors,
            view.kept,
        )
    }

    /// Splits `character` into inputs of `db` as it is, its standard copies already added.
    pub(crate) fn load_as_is(
        db: &dyn salsa::Database,
        ruleset: RulesetInput,
        character: &Character,
        competing: &[String],
        errors: Vec<serde_json::Value>,
        kept: Vec<(String, String)>,
    ) -> CharacterInput {
        let rules = ruleset.ruleset(db).clone();
        let mut saved = FxHashMap::default();
        for (id, decl) in rules.fields.iter() {
            if decl.decl.input == Some(true) {
                saved.insert(id.to_owned(), SavedValue::loaded(db, None));
            }
        }
        for (id, value) in character.values.iter() {
            let key = qualify_saved(&rules, character, id);
            saved.insert(key, SavedValue::loaded(db, Some(value.clone())));
        }
        let copies = |list, entries: &[CopyEntry]| {
            Arc::new(
                entries
                    .iter()
                    .map(|e| CopyInput::from_entry(db, ruleset, list, e))
                    .collect::<Vec<_>>(),
            )
        };
        let mut picks = character.competing.clone();
        picks.extend(competing.iter().cloned());
        CharacterInput::builder(
            ruleset,
            character.id.clone(),
            character.creating.unwrap_or(false),
            Arc::new(saved),
            copies(CopyList::Features, &character.features),
            copies(CopyList::Inventory, &character.inventory),
            Arc::new(character.applied.clone()),
            Arc::new(character.choices.clone()),
            Arc::new(picks),
            Arc::new(
                character
                    .links
                    .iter()
                    .map(|(k, v)| (k.to_owned(), v.clone()))
                    .collect(),
            ),
            Arc::new(FxHashMap::default()),
            Arc::new(errors),
            Arc::new(character.follow_ups.clone()),
            Arc::new(kept),
        )
        .durability(STRUCTURE)
        .new(db)
    }

    /// Sets the saved value of `field` (qualified): one [`SavedValue`] changes.
    pub fn save_value(self, db: &mut dyn salsa::Database, field: &str, value: Option<Literal>) {
        let existing = self.saved(db).get(field).copied();
        match existing {
            Some(handle) => {
                handle.set_value(db).with_durability(EDITED).to(value);
            }
            None => {
                let handle = SavedValue::builder(value).durability(EDITED).new(db);
                let mut saved = (**self.saved(db)).clone();
                saved.insert(field.to_owned(), handle);
                self.set_saved(db).to(Arc::new(saved));
            }
        }
    }
}

/// A saved value's key: a qualified field ID as is; a bare one resolved in the pinned packs, in pin
/// order, then in every loaded pack (decisions.md, "Saved values by bare ID").
pub(crate) fn qualify_saved(ruleset: &Ruleset, character: &Character, id: &str) -> String {
    if id.contains(':') {
        return id.to_owned();
    }
    let pins = character.packs.iter().map(|p| p.id.as_str());
    let loaded = ruleset.packs.iter().map(|p| p.id.as_str());
    pins.chain(loaded)
        .map(|pack| format!("{pack}:{id}"))
        .find(|q| ruleset.fields.get(q).is_some())
        .unwrap_or_else(|| id.to_owned())
}
