//! The batch being applied ([`Applier`]): the working file, the session brought to it, the
//! formulas' scope and the helpers every family of change types uses. Below every module of
//! `changes/`, which import it and never [`super`]; [`super`] runs the batch
//! ([`Applier::run`]).

use std::sync::Arc;

use ocf_dice::faces::DiceFunction;
use ocf_formula::{Root, Value};
use ocf_model::{Change, Character, Formula, Ruleset};
use serde_json::{Map, Value as Json};

use super::batch::{Adjustment, ChangeError};
use super::eval;
use super::eval::Scope;
use crate::db::{CharacterInput, Database};
use crate::session::{CharacterId, Session};

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
