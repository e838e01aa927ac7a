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

use ocf_dice::faces::DiceFunction;
use ocf_formula::{Root, Value};
use ocf_model::{Change, ChangeType, Character, Formula, Ruleset};
use serde_json::{Map, Value as Json, json};

pub use batch::{Adjustment, Applied, ChangeError};
pub use eval::{OwnedSelf, Scope};

use crate::db::{CharacterInput, Database};

use crate::session::{CharacterId, Session};

/// `maxOverflowChain` (PROVISIONAL; decisions.md, issue 12): how many fields one adjust may pass
/// through, absorbing fields and overflow together.
pub const MAX_OVERFLOW_CHAIN: usize = 16;

/// The most changes one batch may make, `forEach` copies included (`maxActionSteps` bounds the
/// changes an action proposes; a batch from an app is bounded the same).
pub const MAX_BATCH_CHANGES: usize = 10_000;

/// The call's options besides the ruleset, character and batch.
#[derive(Default)]
pub struct Options<'d> {
    /// The views filling the character's link slots, as computeSheet takes them.
    pub links: Map<String, Json>,
    /// Strict: a change that matches nothing, or a value out of its bounds, fails the batch; not
    /// strict, it is skipped (or clamped) and reported in `skipped` (decisions.md, issue 12).
    pub strict: bool,
    /// Faces for incoming-change dice after each change's own `faces`; without one, dice that
    /// need a face fail the batch (`no-more-faces`).
    pub dice: Option<&'d mut dyn DiceFunction>,
}

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

/// One batch being applied to an open character.
pub(crate) struct Applier<'s, 'd> {
    pub session: &'s mut Session,
    pub id: CharacterId,
    /// The working file: every change edits it, then the session is brought to it.
    pub file: Character,
    pub strict: bool,
    pub dice: Option<&'d mut dyn DiceFunction>,
    /// The character's ruleset, its homebrew layered.
    pub ruleset: Arc<Ruleset>,
    /// The pack local names in a change's formulas resolve in.
    pub pack: String,
    pub batch: Vec<Change>,
    pub adjustments: Vec<Adjustment>,
    pub records: Vec<Json>,
    /// `records` as formulas read them (`batch`), each record converted once when it is made:
    /// sharing it with a scope costs a pointer, so a batch of N changes costs N times one.
    pub batch_list: Arc<Vec<Value>>,
    pub skipped: Vec<ChangeError>,
    pub follow_ups: Vec<Json>,
    /// Changes made so far, `forEach` copies included.
    pub made: usize,
    /// The running change's given faces used so far (by its earlier `forEach` elements), and
    /// every face its elements used, to write back.
    pub faces_next: usize,
    pub faces_used: Vec<i64>,
}

impl<'s, 'd> Applier<'s, 'd> {
    pub fn new(
        session: &'s mut Session,
        id: CharacterId,
        file: Character,
        options: Options<'d>,
    ) -> Applier<'s, 'd> {
        let c = session.character_input(id).expect("an open character");
        let ruleset = session
            .deep(id, move |db| c.ruleset(db).ruleset(db).clone())
            .expect("an open character");
        // Local names resolve in the homebrew pack when there is one (it sees every pinned pack),
        // else in the last pack loaded (decisions.md, issue 12).
        let pack = ruleset
            .packs
            .iter()
            .rev()
            .find(|p| p.id == "homebrew")
            .or(ruleset.packs.last())
            .map(|p| p.id.clone())
            .unwrap_or_default();
        Applier {
            session,
            id,
            file,
            strict: options.strict,
            dice: options.dice,
            ruleset,
            pack,
            batch: Vec::new(),
            adjustments: Vec::new(),
            records: Vec::new(),
            batch_list: Arc::default(),
            skipped: Vec::new(),
            follow_ups: Vec::new(),
            made: 0,
            faces_next: 0,
            faces_used: Vec::new(),
        }
    }

    pub fn input(&self) -> CharacterInput {
        self.session
            .character_input(self.id)
            .expect("an open character")
    }

    /// Runs `f` on the character's database ([`Session::deep`]).
    pub fn deep<T: Send + 'static>(&self, f: impl FnOnce(&Database) -> T + Send + 'static) -> T {
        self.session.deep(self.id, f).expect("an open character")
    }

    /// Brings the session to the working file.
    pub fn sync(&mut self) {
        let _ = self.session.update(self.id, &self.file);
    }

    /// The base scope of a change's formulas: the receiving character, `batch` so far.
    pub fn scope(&self) -> Scope {
        Scope::in_pack(self.pack.clone()).with_root(Root::Batch, self.batch_value())
    }

    /// `batch`: what the batch did so far, one record per change.
    pub fn batch_value(&self) -> Value {
        Value::List(self.batch_list.clone())
    }

    /// Evaluates a formula on the character as it is now.
    pub fn eval(&self, text: &str, scope: &Scope, path: &str) -> Result<Value, ChangeError> {
        let c = self.input();
        let text = text.to_owned();
        let scope = scope.clone();
        self.deep(move |db| eval::evaluate(db, c, &text, &scope))
            .map_err(|e| ChangeError::new(e.code.as_str(), path, e.message))
    }

    pub fn eval_bool(&self, f: &Formula, scope: &Scope, path: &str) -> Result<bool, ChangeError> {
        match self.eval(f.as_str(), scope, path)? {
            Value::Bool(b) => Ok(b),
            other => Err(type_mismatch(path, "a boolean", &other)),
        }
    }

    pub fn eval_string(
        &self,
        f: &Formula,
        scope: &Scope,
        path: &str,
    ) -> Result<String, ChangeError> {
        match self.eval(f.as_str(), scope, path)? {
            Value::String(s) if !s.is_empty() => Ok(s.to_string()),
            other => Err(type_mismatch(path, "a non-empty string", &other)),
        }
    }

    pub fn eval_int(&self, f: &Formula, scope: &Scope, path: &str) -> Result<i64, ChangeError> {
        match self.eval(f.as_str(), scope, path)? {
            Value::Int(n) => Ok(n),
            Value::Decimal(d) if d.is_integer() => Ok(d.floor()),
            other => Err(type_mismatch(path, "an integer", &other)),
        }
    }

    /// Something the batch could not do that only strict fails on (a query that matches nothing,
    /// a value out of bounds): strict, the batch's error; else reported in `skipped`.
    pub fn soft(&mut self, error: ChangeError) -> Result<(), ChangeError> {
        if self.strict {
            return Err(error);
        }
        self.skipped.push(error);
        Ok(())
    }

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

/// `type-mismatch` for a value that is not what the change needs.
pub fn type_mismatch(path: &str, wanted: &str, got: &Value) -> ChangeError {
    ChangeError::new(
        "type-mismatch",
        path,
        format!("expected {wanted}, got a {}", got.type_name()),
    )
}

/// A value as a literal for the file.
pub fn literal(value: &Value) -> Json {
    value.to_json()
}

/// `<local id, dots as hyphens>-<n>`, the smallest `n` from 1 that `taken` doesn't hold (DA,
/// "Applying content"; the same for added copies and stored offers, decisions.md).
pub fn made_id(source: &str, taken: impl Fn(&str) -> bool) -> String {
    let local = source.split_once(':').map_or(source, |(_, rest)| rest);
    let stem = local.replace('.', "-");
    (1..)
        .map(|n| format!("{stem}-{n}"))
        .find(|id| !taken(id))
        .expect("some number is free")
}
