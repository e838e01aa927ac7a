//! Each field's value (EC, computeSheet "Field values"; EF, "Fixed order"): base, grants, `set`
//! (competing), `add`, `multiply` (rounding after each), `atLeast`/`atMost`, then rounding and
//! clamping, with the breakdown of what changed it.
//!
//! [`field_value`] is the one query on field-to-field paths: formulas read other fields through
//! [`SheetContext`], which calls it, so salsa records exactly the fields each value read. A loop
//! between fields is caught by salsa and every field on it gets [`field_cycle`]'s value,
//! `circular-formula`; a field reading one of them gets the error through its formula.
//!
//! The value ([`Work`]) by the chapter's steps: its [`instances`] (those standing on it given its
//! tags), [`base`] and grants, `set` and [`competing`] options, `add` and [`stacking`], `multiply`
//! and [`rounding`], [`bounds`].

mod base;
mod bounds;
mod competing;
mod instances;
mod rounding;
mod stacking;

use std::sync::Arc;

use ocf_dice::value::DiceValue;
use ocf_formula::arith::NumberOp;
use ocf_formula::decimal::{ArithError, Millionths};
use ocf_formula::{Decimal, ErrorCode, FormulaError, Value};
use ocf_model::{
    Declared, EffectValue, FieldDecl, FieldType, GrantValue, Op, Recommend, Rounding, StackPolicy,
};

use crate::context::{Bindings, Mode, SelfRef, SheetContext, field_literal};
use crate::db::Source;
/// Declared in the query map ([`crate::db`]); kept here for the crates above.
pub use crate::db::{CharacterInput, Instance, ItemKey, Placed, SavedValue, field_value};
use crate::db::{field_effects, saved_handle};
use instances::has_instances;
pub use instances::stands_on_tags;

use crate::depth::{DepthGuard, STACK_RED_ZONE, STACK_SEGMENT};
use crate::view::applied_self;
use crate::view::default_value;

/// A field of a character: the key of every per-field query.
#[salsa::interned(debug, revisions = usize::MAX)]
pub struct FieldKey<'db> {
    #[returns(copy)]
    pub character: CharacterInput,
    /// The ruleset's own ID where the key comes from the character's table of keys
    /// ([`crate::db::field_keys`]): shared, not copied.
    #[returns(ref)]
    pub field: Arc<str>,
}

/// Why a field has no value: `circular-formula`, or a formula error code, with the error's message
/// and, for a formula that failed, where it is (docs/spec/engine-interface.md, `errorDetail`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub code: ErrorCode,
    pub message: String,
    pub formula: Option<FormulaSite>,
}

/// The formula a field error comes from: its text, the range the error is about, and where it is
/// written (`at`): a JSON pointer into the ruleset's documents for the field's own formulas
/// (`/packs/<pack>/rules/fields/<id>/formula`), or an effect's option ID and property
/// (`<content>#<index>/value`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormulaSite {
    pub text: String,
    pub range: (u32, u32),
    pub at: String,
}

impl FieldError {
    fn new(code: ErrorCode, message: impl Into<String>) -> FieldError {
        FieldError {
            code,
            message: message.into(),
            formula: None,
        }
    }

    /// The error of `text`, with its range.
    fn of_formula(error: FormulaError, text: &str) -> FieldError {
        FieldError {
            code: error.code,
            message: error.message,
            formula: Some(FormulaSite {
                text: text.to_owned(),
                range: (error.range.start().into(), error.range.end().into()),
                at: String::new(),
            }),
        }
    }

    /// Says where the failing formula is written, unless a nearer call said so.
    fn at(mut self, at: impl FnOnce() -> String) -> FieldError {
        if let Some(site) = &mut self.formula
            && site.at.is_empty()
        {
            site.at = at();
        }
        self
    }
}

impl From<FormulaError> for FieldError {
    fn from(e: FormulaError) -> FieldError {
        FieldError::new(e.code, e.message)
    }
}

/// One line of a breakdown: an instance that changed the value.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub op: Op,
    pub value: Value,
    /// Its instance's, shared.
    pub source: Arc<Source>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompetingOption {
    pub id: String,
    pub value: Value,
    pub source: Arc<Source>,
}

/// A competing group: a field's `set` effects, or a `playerChooses` stacking group.
#[derive(Debug, Clone, PartialEq)]
pub struct CompetingGroup {
    pub op: Op,
    pub stack_key: Option<String>,
    pub options: Vec<CompetingOption>,
    pub recommended: String,
    pub applied: String,
}

/// A saved input value outside the field's `min`/`max` (`out-of-range`), clamped to `bound`.
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfRange {
    pub value: Value,
    pub bound: Value,
}

/// A final value outside one of the field's `limits` (`out-of-limits`).
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfLimits {
    pub limit: String,
    pub value: Value,
    pub bound: Value,
}

/// Everything computeSheet reports of one field.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldValue {
    pub value: Option<Value>,
    pub base: Option<Value>,
    pub breakdown: Vec<Step>,
    pub error: Option<FieldError>,
    pub competing: Vec<CompetingGroup>,
    /// Instances that stacking left out, by their place among the field's instances
    /// (`Instance::field_at`): a field's value doesn't read the instances' order in the whole
    /// index ([`crate::db::FieldInstances`]).
    pub suppressed: Vec<usize>,
    pub out_of_range: Option<OutOfRange>,
    pub out_of_limits: Vec<OutOfLimits>,
    /// Shared with the ruleset's list when all are written ([`crate::formula::written_tags`]).
    pub tags: Arc<[String]>,
    pub name: Option<String>,
    /// What the value read ([`crate::reads`]); not part of the value (it compares equal).
    pub reads: crate::reads::FieldReads,
}

impl FieldValue {
    fn failed(error: FieldError) -> FieldValue {
        FieldValue {
            error: Some(error),
            ..FieldValue::default()
        }
    }

    /// A value whose reads weren't recorded.
    fn failed_unrecorded(error: FieldError) -> FieldValue {
        FieldValue {
            reads: crate::reads::FieldReads::unknown(),
            ..FieldValue::failed(error)
        }
    }
}

/// A field's value on the sheet.
pub(crate) fn field_value_query<'db>(
    db: &'db dyn salsa::Database,
    key: FieldKey<'db>,
) -> Arc<FieldValue> {
    // Each field computation may wait on the next, MAX_FIELD_DEPTH deep, on whatever thread reads:
    // a stack that runs low goes on in a segment of the heap instead of overflowing.
    stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || value_of(db, key))
}

fn value_of<'db>(db: &'db dyn salsa::Database, key: FieldKey<'db>) -> Arc<FieldValue> {
    // A derived character's value the given sheet has already (crate::derived).
    if let Some(given) = crate::derived::given_value(db, key) {
        // Debug builds check the judgement against the value computed on the derived character.
        if crate::derived::checked() {
            assert_eq!(
                *given,
                compute_field(db, key),
                "`{}` is shared with the given sheet but differs on the derived one",
                key.field(db)
            );
        }
        return given;
    }
    Arc::new(compute_field(db, key))
}

fn compute_field<'db>(db: &'db dyn salsa::Database, key: FieldKey<'db>) -> FieldValue {
    let Some(_depth) = DepthGuard::enter(&DEPTH, MAX_FIELD_DEPTH) else {
        return FieldValue::failed_unrecorded(FieldError::new(
            ErrorCode::SafetyLimitExceeded,
            format!(
                "`{}` is reached through more than {MAX_FIELD_DEPTH} nested field reads",
                key.field(db)
            ),
        ));
    };
    let character = key.character(db);
    // The character's table of keys holds its ruleset too: a value that reads it reads the
    // ruleset through it, not through two inputs of its own.
    let table = crate::derived::none_in(db).then(|| crate::db::field_keys(db, character));
    let ruleset = match table {
        Some(table) => table.ruleset(),
        None => character.ruleset(db).ruleset(db),
    };
    let Some((place, _, decl)) = ruleset.fields.0.get_full(&**key.field(db)) else {
        return unknown_field(key.field(db));
    };
    let mut out = FieldValue::default();
    let recorder = crate::reads::Recorder::start();
    let mut work = Work {
        db,
        key,
        character,
        ruleset,
        place,
        table,
        decl,
        settings: &ruleset.settings,
        out: &mut out,
    };
    if let Err(error) = work.compute() {
        out.value = None;
        out.base = None;
        out.breakdown.clear();
        out.error = Some(error);
    }
    out.reads = recorder.finish();
    out
}

/// The value of a field the ruleset doesn't declare.
pub(crate) fn unknown_field(field: &str) -> FieldValue {
    FieldValue::failed(FieldError::new(
        ErrorCode::UnknownName,
        format!("no field `{field}`"),
    ))
}

/// How many field values may be computing at once on one thread, each waiting on the next: a
/// chain of fields reading fields is bounded so that untrusted packs cannot overflow the stack
/// (decisions.md, "Field depth"). [`crate::Session`] computes on a thread with a stack sized for it.
pub const MAX_FIELD_DEPTH: usize = 1500;

thread_local! {
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The value of every field on a loop (EC: "every field in the loop gets `error:
/// circular-formula`").
pub(crate) fn field_cycle<'db>(
    db: &'db dyn salsa::Database,
    _id: salsa::Id,
    key: FieldKey<'db>,
) -> Arc<FieldValue> {
    Arc::new(FieldValue::failed_unrecorded(FieldError::new(
        ErrorCode::CircularFormula,
        format!("`{}` depends on itself", key.field(db)),
    )))
}

/// The handle of a field's saved value: a firewall over the character's map of handles, which
/// changes only when a field nothing declared is saved.
pub(crate) fn saved_handle_query<'db>(
    db: &'db dyn salsa::Database,
    key: FieldKey<'db>,
) -> Option<SavedValue> {
    key.character(db).saved(db).get(&**key.field(db)).copied()
}

/// For the execution log: the field of a per-field query's key.
pub fn field_key_text(
    db: &dyn salsa::Database,
    query: &str,
    key: salsa::DatabaseKeyIndex,
) -> Option<String> {
    use salsa::plumbing::FromId;
    if !matches!(query, "field_value" | "field_effects" | "saved_handle") {
        return None;
    }
    let field = FieldKey::from_id(key.key_index());
    Some(field.field(db).to_string())
}

struct Work<'a, 'db> {
    db: &'db dyn salsa::Database,
    key: FieldKey<'db>,
    /// The key's character and its ruleset, read once: each is a salsa lookup.
    character: CharacterInput,
    ruleset: &'db ocf_model::Ruleset,
    /// The field's place in the ruleset's fields.
    place: usize,
    /// The character's table of keys, where it may be used ([`SheetContext::with_keys`]).
    table: Option<&'db crate::db::FieldTable<'db>>,
    decl: &'db Declared<FieldDecl>,
    settings: &'db ocf_model::Settings,
    out: &'a mut FieldValue,
}

/// An instance whose `when` held, with its value.
struct Counted {
    instance: Placed,
    value: Value,
}

impl<'db> Work<'_, 'db> {
    fn character(&self) -> CharacterInput {
        self.character
    }

    fn ty(&self) -> FieldType {
        self.decl.decl.r#type
    }

    /// A context for the field's own formulas (`formula`, `min`, `max`, limits, tags).
    fn own_context(&self) -> SheetContext<'db> {
        SheetContext::with_ruleset(
            self.db,
            self.character,
            self.ruleset,
            Mode::Sheet,
            Bindings::rules(&self.decl.pack),
        )
        .with_keys(self.table)
    }

    /// A context for an instance's `when` and `value`: `self` and `item` as its activation sees them.
    fn instance_context(&self, instance: &'db Instance) -> SheetContext<'db> {
        let character = self.character();
        let self_ref = match (instance.copy, instance.applied_entry) {
            (Some(copy), _) => SelfRef::Copy(copy),
            (None, Some(i)) => {
                SelfRef::Value(applied_self(self.ruleset, &character.applied(self.db)[i]))
            }
            (None, None) => SelfRef::None,
        };
        let item = (!instance.item.is_empty()).then(|| {
            ItemKey::new(
                self.db,
                character.ruleset(self.db),
                &*instance.item,
                &instance.templates[..],
            )
        });
        SheetContext::with_ruleset(
            self.db,
            character,
            self.ruleset,
            Mode::Sheet,
            Bindings {
                pack: &instance.pack,
                self_ref,
                item,
                pick: instance.pick.clone(),
                entry: None,
                slot: instance.slot,
            },
        )
        .with_keys(self.table)
    }

    fn eval(&self, text: &str, ctx: &SheetContext<'db>) -> Result<Value, FieldError> {
        ctx.evaluate(text)
            .map_err(|e| FieldError::of_formula(e, text))
    }

    /// Where an effect's `property` (`when`, `value`) is written: a pointer into its pack's
    /// documents for an item's own effect (`/packs/<pack>/content/<i>/effects/<j>/value`) or a
    /// content type's (`/packs/<pack>/rules/contentTypes/<type>/effects/<j>/value`), else (the
    /// rules', a choice's, an inherited one) its option ID and the property. Found only for an
    /// error, by the option ID (`<content>#<index or id>`, `#type.` for a type's).
    fn effect_site(&self, instance: &Instance, property: &str) -> String {
        let fallback = || format!("{}/{property}", instance.option_id);
        let ruleset = self
            .key
            .character(self.db)
            .ruleset(self.db)
            .ruleset(self.db);
        let id = instance.option_id.split('@').next().unwrap_or_default();
        let Some((content, key)) = id.split_once('#') else {
            return fallback();
        };
        let Some(entry) = ruleset.item(content) else {
            return fallback();
        };
        let index_in = |effects: &[Arc<ocf_model::Effect>]| {
            let i = key
                .trim_start_matches("type.")
                .parse::<usize>()
                .ok()
                .or_else(|| {
                    let wanted = key.trim_start_matches("type.");
                    effects.iter().position(|e| e.id.as_deref() == Some(wanted))
                })?;
            (effects.get(i) == Some(&instance.effect)).then_some(i)
        };
        let escape = |s: &str| s.replace('~', "~0").replace('/', "~1");
        if key.starts_with("type.") {
            let Some((name, decl)) = entry
                .type_name()
                .and_then(|t| Some((t, ruleset.content_type(t)?)))
            else {
                return fallback();
            };
            let Some(i) = index_in(&decl.decl.effects) else {
                return fallback();
            };
            let local = name.split_once(':').map_or(name, |(_, rest)| rest);
            return format!(
                "/packs/{}/rules/contentTypes/{}/effects/{i}/{property}",
                decl.pack,
                escape(local)
            );
        }
        let Some(i) = index_in(&entry.item.effects) else {
            return fallback();
        };
        // The item as its release writes it, with the effect written there (not inherited).
        let local = content.split_once(':').map_or(content, |(_, rest)| rest);
        let placed = ruleset
            .sources
            .iter()
            .find(|r| r.id.as_str() == entry.pack)
            .and_then(|release| {
                release.content.iter().position(|c| {
                    c.id.as_ref()
                        .is_some_and(|id| id.as_str() == local || id.as_str() == content)
                        && c.effects.len() > i
                })
            });
        match placed {
            Some(at) => format!("/packs/{}/content/{at}/effects/{i}/{property}", entry.pack),
            None => fallback(),
        }
    }

    /// Where the field's own `property` (`formula`, `min`, ...) is written: a pointer into its
    /// pack's rules, as loadRuleset's errors give a document's `path`.
    fn own_site(&self, property: &str) -> String {
        let field = self.key.field(self.db);
        let pack = self.decl.pack.as_str();
        let local = field
            .strip_prefix(pack)
            .and_then(|rest| rest.strip_prefix(':'))
            .unwrap_or(field);
        format!(
            "/packs/{pack}/rules/fields/{}/{property}",
            local.replace('~', "~0").replace('/', "~1")
        )
    }

    fn compute(&mut self) -> Result<(), FieldError> {
        self.out.tags = self.tags()?;
        self.out.name = self.name();
        let ctx = self.own_context();

        // 1. Base value.
        let is_input = self.decl.decl.input == Some(true);
        let mut value = if is_input {
            self.input_base(&ctx)?
        } else if let Some(formula) = &self.decl.decl.formula {
            let text = formula.as_str();
            let v = crate::formula::own_formula(self.ruleset, self.place, &self.decl.pack, text)
                .and_then(|(formula, names)| ctx.evaluate_parsed(&formula, names))
                .map_err(|e| FieldError::of_formula(e, text))
                .map_err(|e| e.at(|| self.own_site("formula")))?;
            self.coerce(v)?
        } else {
            default_value(&self.decl.decl).unwrap_or_default()
        };

        let ruleset = self.ruleset;
        let all: &[Placed] = if has_instances(self.db, self.character, self.place, self.table) {
            field_effects(self.db, self.key)
        } else {
            &[]
        };
        let instances: Vec<&Placed> = all
            .iter()
            .filter(|i| stands_on_tags(ruleset, i, &self.out.tags))
            .collect();

        // 2. Grants, for a set field.
        if self.ty() == FieldType::Set {
            let grants = self.counted(&instances, Op::Grant)?;
            let mut members: Vec<Value> = match &value {
                Value::List(items) => (**items).clone(),
                _ => Vec::new(),
            };
            for grant in grants {
                match &grant.value {
                    Value::List(items) => members.extend(items.iter().cloned()),
                    Value::Null => {}
                    other => members.push(other.clone()),
                }
                self.step(Op::Grant, grant.value.clone(), &grant.instance);
            }
            members.sort_by(compare_members);
            members.dedup();
            value = Value::list(members);
        }
        self.out.base = Some(value.clone());

        // 3 to 6. Most fields have no instances: their value is the base. Asking the operations
        // of none was 1.5 M of a cold sheet's 22.6 M instructions at 2 000 fields.
        if !instances.is_empty() {
            value = self.operations(value, &instances)?;
        }

        // 7. Round an integer field's decimal once, then clamp a derived value.
        value = self.finish(value)?;
        if !is_input {
            value = self.clamp(value, &ctx)?;
        }
        self.limits(&value, &ctx)?;
        self.out.value = Some(value);
        Ok(())
    }

    /// Steps 3 to 6 of a value (EC, computeSheet "Effects"): sets (stacking, then competing
    /// options), adds, multiplies, then the highest `atLeast` and the lowest `atMost`.
    fn operations(
        &mut self,
        mut value: Value,
        instances: &[&'db Placed],
    ) -> Result<Value, FieldError> {
        // 3. Set: stacking, then competing options.
        let sets = self.counted(instances, Op::Set)?;
        let sets = self.stack(Op::Set, sets)?;
        if let Some(applied) = self.compete(Op::Set, None, sets)? {
            value = self.coerce(applied.value.clone())?;
            self.step(Op::Set, applied.value.clone(), &applied.instance);
        }

        // 4. Add.
        let adds = self.counted(instances, Op::Add)?;
        for add in self.stack(Op::Add, adds)? {
            let before = value.clone();
            value = add_values(&value, &add.value)?;
            if value != before {
                self.step(Op::Add, add.value.clone(), &add.instance);
            }
        }

        // 5. Multiply, in instance order, an integer field rounding after each.
        let multiplies = self.counted(instances, Op::Multiply)?;
        for m in self.stack(Op::Multiply, multiplies)? {
            let before = value.clone();
            // Exact and wide, so that only the result meets its type's range (formulas.md:
            // "a result out of the range of its type"): an int field past the decimal range
            // may still be halved.
            let product = millionths(&value)?
                .checked_mul(millionths(&m.value)?)
                .map_err(arith)?;
            value = if self.ty() == FieldType::Integer {
                let rounding = m
                    .instance
                    .effect
                    .rounding
                    .or(self.decl.decl.rounding)
                    .or(self.settings.rounding)
                    .unwrap_or(Rounding::Floor);
                Value::Int(round_wide(product, rounding).map_err(arith)?)
            } else {
                Value::Decimal(product.to_decimal().map_err(arith)?)
            };
            if !value.equals(&before) {
                self.step(Op::Multiply, m.value.clone(), &m.instance);
            }
        }

        // 6. The highest atLeast raises, then the lowest atMost lowers.
        let at_least = self.stack(Op::AtLeast, self.counted(instances, Op::AtLeast)?)?;
        if let Some(best) = pick_bound(at_least, true)?
            && compare(&best.value, &value)?.is_gt()
        {
            value = best.value.clone();
            self.step(Op::AtLeast, best.value.clone(), &best.instance);
        }
        let at_most = self.stack(Op::AtMost, self.counted(instances, Op::AtMost)?)?;
        if let Some(best) = pick_bound(at_most, false)?
            && compare(&best.value, &value)?.is_lt()
        {
            value = best.value.clone();
            self.step(Op::AtMost, best.value.clone(), &best.instance);
        }
        Ok(value)
    }

    /// The field's tags: written, then those its `{ formula }` entries give, each once. Written
    /// tags alone are the ruleset's list, shared ([`crate::formula::written_tags`]).
    fn tags(&self) -> Result<Arc<[String]>, FieldError> {
        if let Some(written) = crate::formula::written_tags(self.ruleset, self.place) {
            return Ok(written);
        }
        let mut tags: Vec<String> = Vec::new();
        let ctx = self.own_context();
        for entry in &self.decl.decl.tags {
            match entry {
                ocf_model::Computed::Literal(tag) => tags.push(tag.0.clone()),
                ocf_model::Computed::Formula { formula } => {
                    match self.eval(formula.as_str(), &ctx)? {
                        Value::String(s) => tags.push(s.to_string()),
                        Value::List(items) => {
                            for item in items.iter() {
                                if let Value::String(s) = item {
                                    tags.push(s.to_string());
                                }
                            }
                        }
                        other => {
                            return Err(FieldError::new(
                                ErrorCode::TypeMismatch,
                                format!("a tag formula gave a {}", other.type_name()),
                            ));
                        }
                    }
                }
            }
        }
        Ok(crate::reads::kept_once(tags).into())
    }

    /// `name`: the `nameFrom` string field's value when it is not blank.
    fn name(&self) -> Option<String> {
        let from = self.decl.decl.name_from.as_ref()?;
        let ctx = self.own_context();
        let id = ctx.resolve(from.as_str())?;
        crate::reads::field(&id);
        let key = FieldKey::new(self.db, self.character(), &*id);
        match &field_value(self.db, key).value {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.to_string()),
            _ => None,
        }
    }
}

fn arith(e: ocf_formula::decimal::ArithError) -> FieldError {
    match e {
        ArithError::Overflow => {
            FieldError::new(ErrorCode::ArithmeticOverflow, "a number is too large")
        }
        ArithError::DivisionByZero => {
            FieldError::new(ErrorCode::DivisionByZero, "division by zero")
        }
    }
}

/// A number as exact wide millionths: an int of any size, or a decimal.
fn millionths(value: &Value) -> Result<Millionths, FieldError> {
    value.as_millionths().ok_or_else(|| {
        FieldError::new(
            ErrorCode::TypeMismatch,
            format!("a {} is not a number", value.type_name()),
        )
    })
}

fn round_wide(m: Millionths, rounding: Rounding) -> Result<i64, ArithError> {
    match rounding {
        Rounding::Floor => m.floor(),
        Rounding::Ceil => m.ceil(),
        Rounding::Round => m.round(),
    }
}

fn round(d: Decimal, rounding: Rounding) -> i64 {
    match rounding {
        Rounding::Floor => d.floor(),
        Rounding::Ceil => d.ceil(),
        Rounding::Round => d.round(),
    }
}

/// `a + b` for an add: ints stay ints, a decimal makes a decimal (kept to six places), dice add.
fn add_values(a: &Value, b: &Value) -> Result<Value, FieldError> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x
            .checked_add(*y)
            .map(Value::Int)
            .ok_or_else(|| arith(ArithError::Overflow)),
        (Value::Dice(_), _) | (_, Value::Dice(_)) => {
            let dice = |v: &Value| match v {
                Value::Dice(d) => Ok((**d).clone()),
                Value::Int(n) => Ok(DiceValue::flat(*n)),
                other => Err(FieldError::new(
                    ErrorCode::TypeMismatch,
                    format!("cannot add a {} to dice", other.type_name()),
                )),
            };
            dice(a)?
                .add(&dice(b)?)
                .map(Value::dice)
                .map_err(|_| arith(ArithError::Overflow))
        }
        _ => match ocf_formula::arith::apply(NumberOp::Add, a, b) {
            Some(sum) => sum.map_err(arith),
            None => Err(FieldError::new(
                ErrorCode::TypeMismatch,
                format!("cannot add a {} to a {}", b.type_name(), a.type_name()),
            )),
        },
    }
}

/// Twice a value's average, to compare numbers and dice alike (EC: "Dice values compare by
/// average").
fn doubled(value: &Value) -> Result<i128, FieldError> {
    match value {
        Value::Dice(d) => Ok(d.doubled_average() * 1_000_000),
        other => Ok(millionths(other)?.get() * 2),
    }
}

fn compare(a: &Value, b: &Value) -> Result<std::cmp::Ordering, FieldError> {
    Ok(doubled(a)?.cmp(&doubled(b)?))
}

/// The index (among `members`) of the highest (or lowest) value, ties to the earlier instance.
fn extreme(counted: &[Counted], members: &[usize], highest: bool) -> Result<usize, FieldError> {
    let mut best = members[0];
    for &m in &members[1..] {
        let ord = compare(&counted[m].value, &counted[best].value)?;
        if (highest && ord.is_gt()) || (!highest && ord.is_lt()) {
            best = m;
        }
    }
    Ok(best)
}

fn pick_bound(counted: Vec<Counted>, highest: bool) -> Result<Option<Counted>, FieldError> {
    if counted.is_empty() {
        return Ok(None);
    }
    let all: Vec<usize> = (0..counted.len()).collect();
    let best = extreme(&counted, &all, highest)?;
    Ok(counted.into_iter().nth(best))
}

/// Set members sort: strings by text, anything else after, by its printed form.
fn compare_members(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => a.to_string().cmp(&b.to_string()),
    }
}
