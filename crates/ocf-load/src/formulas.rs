//! Every formula of a pack, found with where it is and what it may read, and checked (EC step 5:
//! "Every formula must parse and type-check as in the build, resolving field names in its pack and
//! that pack's dependencies").
//!
//! [`collect`] walks a release (catalogue §1.1 lists where formulas appear) and gives each formula's
//! text, its JSON pointer, the roots bound there (catalogue §1.7) and the type it must have where the
//! chapters fix one (conditions are booleans). [`check_pack`] parses and checks them against an
//! [`Env`] of the fields visible from the pack. The build calls the same two functions.

use std::cell::RefCell;
use std::rc::Rc;

use ocf_formula::{Env, ErrorCode, Root, Ty};
use ocf_model::{
    Action, Change, Choice, ChoiceOptions, ChoiceSource, Computed, ContentItem, ContentTypeDecl,
    Effect, EffectValue, FieldType, FollowUp, Formula, GrantValue, Op, PackRelease, PickCount,
    Query, Step, StepOptions, StepRecommend, Target,
};
use rustc_hash::FxHashMap;

use crate::error::LoadErrorRecord;

/// Which document of the release a formula is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    Rules,
    Content(usize),
}

/// One formula of a pack.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundFormula {
    pub document: Document,
    /// A JSON pointer inside the document (`/effects/0/value`).
    pub pointer: String,
    pub text: String,
    /// The roots bound where the formula is.
    pub roots: &'static [Root],
    /// The type its value must fit, where the chapters fix one.
    pub expected: Option<Ty>,
    /// An activation condition (EC "Activation": grant and choice `when`, an immunity's `when` and
    /// query `where`), which may read input fields only.
    pub activation: bool,
    /// An effect's `value` aimed at one field (`target: <field>`): the field as written and the
    /// effect's op, so the value is checked against the field's type once fields are known.
    pub target: Option<(String, Op)>,
}

/// What content formulas read: the copy, its item (and a template's `base`/`prior`), the character,
/// links, and in a choice's formulas `pick`, `slot` and `picks`; `entry` in immunity queries.
const CONTENT: &[Root] = &[
    Root::SelfCopy,
    Root::Item,
    Root::Base,
    Root::Prior,
    Root::Character,
    Root::Links,
    Root::Pick,
    Root::Slot,
    Root::Picks,
    Root::Entry,
];

/// Content effects also see the roll, the incoming change and the action around them (EF).
const EFFECT: &[Root] = &[
    Root::SelfCopy,
    Root::Item,
    Root::Base,
    Root::Prior,
    Root::Character,
    Root::Links,
    Root::Pick,
    Root::Slot,
    Root::Picks,
    Root::Roll,
    Root::Incoming,
    Root::Situational,
    Root::Participants,
    Root::Action,
];

/// An incoming-change effect's `then` changes (EF, "The incoming amount, and effects that break
/// their copy").
const THEN: &[Root] = &[
    Root::SelfCopy,
    Root::Item,
    Root::Character,
    Root::Links,
    Root::Incoming,
];

/// Effects on rolls apply while an action rolls, so they see what the action's formulas see of it:
/// EF's roll effect `has(flags.critical) && flags.critical && roll.item.range == 'melee'`.
const ROLL_EFFECT: &[Root] = &[
    Root::SelfCopy,
    Root::Item,
    Root::Base,
    Root::Prior,
    Root::Character,
    Root::Links,
    Root::Pick,
    Root::Slot,
    Root::Picks,
    Root::Roll,
    Root::Situational,
    Root::Participants,
    Root::Action,
    Root::Params,
    Root::Steps,
    Root::Flags,
];

/// Actions and their steps (EA, DA).
const ACTION: &[Root] = &[
    Root::SelfCopy,
    Root::Item,
    Root::Character,
    Root::Links,
    Root::Params,
    Root::Situational,
    Root::Participants,
    Root::Participant,
    Root::Steps,
    Root::Flags,
    Root::Action,
    Root::Roll,
    Root::X,
    Root::Picked,
    Root::Picks,
    Root::Options,
    Root::Choice,
    Root::Change,
    Root::Field,
    Root::Amount,
    Root::Part,
    Root::Batch,
];

/// Fields, constraints and the rules' conditions: the character only.
const CHARACTER: &[Root] = &[Root::Character, Root::Links, Root::SelfCopy, Root::Item];

/// Result bands: the roll and the step's band context (EA "Classifying an earlier roll again" 2:
/// "its flags, `params`, `steps`, `participants`, and in an `each` step `participant`"; "The roll
/// summary": "everything but `roll`", the action's item and copy included; DA's `degree` set
/// reads `flags.dc`).
const BAND: &[Root] = &[
    Root::Roll,
    Root::Participants,
    Root::Participant,
    Root::Situational,
    Root::Params,
    Root::Steps,
    Root::Flags,
    Root::Action,
    Root::SelfCopy,
    Root::Item,
    Root::Character,
    Root::Links,
];

/// Whether `self` is, where `roots` are bound, the copy (or applied entry) of the content item the
/// formula is written in: its effects, choices, grants and computed values, incoming effects'
/// `then`. Action steps are not (a choice step over copies binds `self` to each candidate copy).
pub fn self_is_the_owner(roots: &'static [Root]) -> bool {
    [CONTENT, EFFECT, ROLL_EFFECT, THEN]
        .iter()
        .any(|r| std::ptr::eq(*r, roots))
}

/// A field-set query's `where` (EF: "reads only `item` ... plus `pick`/`slot` in a choice's effects")
/// and a content-only query's.
pub const ITEM_ONLY: &[Root] = &[Root::Item, Root::Pick, Root::Slot];

/// The declared type of an item's field (its content type's, else a template field's), when the
/// caller can tell.
pub type ItemFieldType<'a> = &'a dyn Fn(&ContentItem, &str) -> Option<FieldType>;

/// Every formula of `release`, in document order. Item field values whose declared type is not
/// known are formulas when written as a number or a boolean ([`collect_with`] knows more).
pub fn collect(release: &PackRelease) -> Vec<FoundFormula> {
    collect_with(release, &|_, _| None)
}

/// Every formula of `release`, with `item_field_type` telling which item field values are formulas:
/// those of `integer`, `decimal`, `boolean` and `dice` fields, whatever their YAML type, expected
/// to fit the field's type (EC: "`integer`, `decimal`, `boolean` and `dice` fields are formulas").
pub fn collect_with(
    release: &PackRelease,
    item_field_type: ItemFieldType<'_>,
) -> Vec<FoundFormula> {
    let mut c = Collector {
        out: Vec::new(),
        document: Document::Rules,
        item_field_type,
    };
    let rules = &release.rules;
    for (id, field) in rules.fields.iter() {
        let at = format!("/fields/{}", escape(id));
        c.opt(
            &at,
            "formula",
            &field.formula,
            CHARACTER,
            formula_ty(field.r#type),
        );
        c.opt(&at, "min", &field.min, CHARACTER, Some(Ty::number()));
        c.opt(&at, "max", &field.max, CHARACTER, Some(Ty::number()));
        for (name, limit) in field.limits.iter() {
            let at = format!("{at}/limits/{}", escape(name));
            c.opt(&at, "min", &limit.min, CHARACTER, Some(Ty::number()));
            c.opt(&at, "max", &limit.max, CHARACTER, Some(Ty::number()));
        }
        for (i, tag) in field.tags.iter().enumerate() {
            if let Computed::Formula { formula } = tag {
                c.push(&format!("{at}/tags/{i}/formula"), formula, CHARACTER, None);
            }
        }
    }
    for (name, ty) in rules.content_types.iter() {
        c.content_type(&format!("/contentTypes/{}", escape(name)), ty);
    }
    for (id, s) in rules.situational.iter() {
        let at = format!("/situational/{}", escape(id));
        c.opt(&at, "available", &s.available, ACTION, Some(Ty::Bool));
        c.effects(&at, &s.effects);
    }
    for (id, set) in rules.bands.iter() {
        let at = format!("/bands/{}", escape(id));
        c.opt(&at, "value", &set.value, BAND, None);
        for (i, band) in set.bands.iter().enumerate() {
            c.push(
                &format!("{at}/bands/{i}/when"),
                &band.when,
                BAND,
                Some(Ty::Bool),
            );
        }
    }
    c.actions("", &rules.actions);
    c.choices("", &rules.choices);
    for (id, constraint) in rules.constraints.iter() {
        let at = format!("/constraints/{}", escape(id));
        c.push(
            &format!("{at}/check"),
            &constraint.check,
            CHARACTER,
            Some(Ty::Bool),
        );
        c.query(&format!("{at}/copies"), constraint.copies.as_ref(), CONTENT);
        for (key, formula) in constraint.data.iter() {
            c.push(
                &format!("{at}/data/{}", escape(key)),
                formula,
                CHARACTER,
                None,
            );
        }
    }
    c.follow_ups("", &rules.follow_ups);
    for (i, q) in rules.standard_copies.iter().enumerate() {
        c.query(&format!("/standardCopies/{i}"), Some(q), ITEM_ONLY);
    }
    for (i, immunity) in rules.immune_to.iter().enumerate() {
        let at = format!("/immuneTo/{i}");
        let from = c.out.len();
        c.opt(&at, "when", &immunity.when, CONTENT, Some(Ty::Bool));
        c.query(&format!("{at}/query"), immunity.query.as_ref(), CONTENT);
        c.conditions_from(from);
    }
    c.effects("", &rules.effects);
    for (index, item) in release.content.iter().enumerate() {
        c.document = Document::Content(index);
        c.item(item);
    }
    c.out
}

/// The type a field's `formula` must fit: its values' type, except that an `integer` field's may be
/// a decimal, rounded once at the end (EC "Round and clamp"; EF "Rounding": "Any other decimal an
/// integer field ends up with (from a formula, ...) rounds once, at the end").
pub fn formula_ty(ty: FieldType) -> Option<Ty> {
    match ty {
        FieldType::Integer => Some(Ty::number()),
        other => field_ty(other),
    }
}

/// The formula type of a field's values.
pub fn field_ty(ty: FieldType) -> Option<Ty> {
    Some(match ty {
        FieldType::Integer => Ty::Int,
        FieldType::Decimal => Ty::number(),
        FieldType::Boolean => Ty::Bool,
        FieldType::String | FieldType::Enum | FieldType::Id => Ty::String,
        FieldType::Set => Ty::list(Ty::String),
        FieldType::Dice => Ty::union([Ty::Dice, Ty::Int]),
    })
}

/// The environment of a formula: the fields visible from its pack by local and qualified ID, its
/// roots as `dyn` (their members are checked when evaluated), and every character function.
pub fn env(fields: &[(String, Ty)], roots: &[Root]) -> Env {
    let mut env = Env::new()
        .with_copies(Ty::open_map(Ty::Dyn))
        .with_sum_fields()
        .with_families();
    for (id, ty) in fields {
        env = env.with_field(id, ty.clone());
    }
    for root in roots {
        env = env.with_root(*root, Ty::Dyn);
    }
    env
}

/// The checking environments of one pack, one per set of roots rather than one per formula: each
/// holds every visible field, which is most of the cost of making one. Inside a [`kept`] scope
/// (the language server's builds) the environments and each formula's check are kept between
/// builds for the same visible fields: checking is pure, so a kept result is the check's own.
pub struct Envs<'a> {
    fields: &'a [(String, Ty)],
    built: Vec<(&'static [Root], Rc<Env>)>,
    /// The kept checks for these fields, when a scope keeps them.
    slot: Option<usize>,
}

impl<'a> Envs<'a> {
    pub fn new(fields: &'a [(String, Ty)]) -> Envs<'a> {
        let slot = KEPT.with(|kept| Some(kept.borrow_mut().as_mut()?.slot(fields)));
        Envs {
            fields,
            built: Vec::new(),
            slot,
        }
    }

    /// `f` of the kept checks for these fields, when a scope keeps them (`None` otherwise).
    fn kept<R>(&self, f: impl FnOnce(&mut Slot) -> R) -> Option<R> {
        let slot = self.slot?;
        KEPT.with(|kept| {
            let mut kept = kept.borrow_mut();
            kept.as_mut()?.slots.get_mut(slot).map(f)
        })
    }

    /// The environment where `roots` are bound. A content-only query (`ITEM_ONLY`) sees no field
    /// (EC step 4: standard copies' queries read nothing but `item`).
    pub fn get(&mut self, roots: &'static [Root]) -> Rc<Env> {
        if let Some((_, env)) = self.built.iter().find(|(r, _)| std::ptr::eq(*r, roots)) {
            return env.clone();
        }
        let kept = self
            .kept(|s| {
                s.envs
                    .iter()
                    .find(|(r, _)| std::ptr::eq(*r, roots))
                    .map(|(_, env)| env.clone())
            })
            .flatten();
        let env = kept.unwrap_or_else(|| {
            let fields = if roots == ITEM_ONLY {
                &[][..]
            } else {
                self.fields
            };
            let env = Rc::new(env(fields, roots));
            self.kept(|s| s.envs.push((roots, env.clone())));
            env
        });
        self.built.push((roots, env.clone()));
        env
    }

    /// [`check_one`] of `text` where `roots` are bound.
    pub fn check(
        &mut self,
        text: &str,
        roots: &'static [Root],
        expected: Option<&Ty>,
    ) -> Result<Ty, (ErrorCode, String)> {
        let key = |slot: usize| {
            let roots = (roots.as_ptr() as usize, roots.len());
            (slot, roots, expected.cloned(), text.into())
        };
        if let Some(slot) = self.slot
            && let Some(Some(known)) = self.kept(|s| s.checked.get(&key(slot)).cloned())
        {
            return known;
        }
        let env = self.get(roots);
        let checked = check_one(text, &env, expected);
        if let Some(slot) = self.slot {
            self.kept(|s| {
                if s.checked.len() >= MAX_KEPT_CHECKS {
                    s.checked.clear();
                }
                s.checked.insert(key(slot), checked.clone());
            });
        }
        checked
    }
}

/// What a [`kept`] scope keeps: per set of visible fields (the build's and loadRuleset's lists,
/// a few packs), its environments and its formulas' checks.
#[derive(Default)]
pub struct Kept {
    slots: Vec<Slot>,
}

struct Slot {
    fields: Vec<(String, Ty)>,
    envs: Vec<(&'static [Root], Rc<Env>)>,
    /// By slot, roots, expected type and text.
    checked: FxHashMap<CheckKey, Result<Ty, (ErrorCode, String)>>,
}

type CheckKey = (usize, (usize, usize), Option<Ty>, Box<str>);

/// How many sets of visible fields are kept, and how many checks each: a set that changes (a
/// field declared or its type changed) replaces the oldest.
const MAX_KEPT_SLOTS: usize = 8;
const MAX_KEPT_CHECKS: usize = 200_000;

impl Kept {
    fn slot(&mut self, fields: &[(String, Ty)]) -> usize {
        if let Some(i) = self.slots.iter().position(|s| s.fields == fields) {
            return i;
        }
        if self.slots.len() >= MAX_KEPT_SLOTS {
            self.slots.remove(0);
        }
        self.slots.push(Slot {
            fields: fields.to_vec(),
            envs: Vec::new(),
            checked: FxHashMap::default(),
        });
        self.slots.len() - 1
    }
}

thread_local! {
    static KEPT: RefCell<Option<Kept>> = const { RefCell::new(None) };
}

/// Runs `f` with `kept`'s environments and checks in use, and what `f` checks kept in it after
/// (a scope inside another uses the outer's).
pub fn kept<T>(kept: &mut Kept, f: impl FnOnce() -> T) -> T {
    struct GiveBack<'a>(Option<&'a mut Kept>);
    impl Drop for GiveBack<'_> {
        fn drop(&mut self) {
            if let Some(owner) = self.0.take() {
                *owner = KEPT.with(|k| k.borrow_mut().take()).unwrap_or_default();
            }
        }
    }
    let installed = KEPT.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_some() {
            return false;
        }
        *slot = Some(std::mem::take(kept));
        true
    });
    let _give_back = GiveBack(installed.then_some(kept));
    f()
}

/// Parses and checks every formula of `release` against the `fields` visible from it; one
/// `formula-error` per failing formula (EC: `data.cause`, `data.pack`, `data.formula`, `path` the
/// document), its first error's code as the cause.
pub fn check_pack(release: &PackRelease, fields: &[(String, Ty)]) -> Vec<LoadErrorRecord> {
    check_pack_with(release, fields, &|_, _| None, &|_| None)
}

/// Whether the field a formula names (as written) is an input field, when the caller can tell.
pub type FieldIsInput<'a> = &'a dyn Fn(&str) -> Option<bool>;

/// [`check_pack`], with item field values typed by `item_field_type` ([`collect_with`]) and
/// activation conditions reading only fields `field_is_input` calls inputs.
pub fn check_pack_with(
    release: &PackRelease,
    fields: &[(String, Ty)],
    item_field_type: ItemFieldType<'_>,
    field_is_input: FieldIsInput<'_>,
) -> Vec<LoadErrorRecord> {
    let pack = release.id.as_str();
    let mut errors = Vec::new();
    let mut envs = Envs::new(fields);
    let types = field_types(fields);
    for found in collect_with(release, item_field_type) {
        let expected = found
            .expected
            .clone()
            .or_else(|| target_type(found.target.as_ref()?, &types));
        let checked = envs
            .check(&found.text, found.roots, expected.as_ref())
            .and_then(|ty| {
                if found.activation {
                    derived_read(&found.text, field_is_input)?;
                }
                Ok(ty)
            });
        if let Err(error) = checked {
            let error = (error.0, aimed_at(&found, error.0, error.1));
            let path = match found.document {
                Document::Rules => crate::error::rules_path(pack),
                Document::Content(i) => crate::error::content_path(pack, i),
            };
            errors.push(
                LoadErrorRecord::new(
                    "formula-error",
                    format!("`{}` at {}{}: {}", found.text, path, found.pointer, error.1),
                )
                .at(path)
                .with("cause", error.0.as_str())
                .with("pack", pack)
                .with("formula", found.text.as_str()),
            );
        }
    }
    errors
}

/// The fields' types by ID, for [`target_type`]: found once per check, not by a scan per formula.
pub type FieldTypes<'a> = FxHashMap<&'a str, &'a Ty>;

/// [`FieldTypes`] of a list of visible fields.
pub fn field_types(fields: &[(String, Ty)]) -> FieldTypes<'_> {
    fields.iter().map(|(id, ty)| (id.as_str(), ty)).collect()
}

/// The type an effect's value must have for the one field it targets: a number for a numeric
/// field's `set`, `add`, `multiply`, `atLeast` and `atMost`; the field's own type for a boolean's
/// or a string's `set`. Other fields and ops (dice, lists, grants) are not narrowed here: the
/// engine reads those values by their own rules. A string formula aimed at an integer field is
/// then `type-mismatch`, as it would be on every sheet (EC step 5: formulas "type-check as in the
/// build").
pub fn target_type((field, op): &(String, Op), fields: &FieldTypes<'_>) -> Option<Ty> {
    let ty = *fields.get(field.as_str())?;
    match (ty, op) {
        (Ty::Int | Ty::Decimal, Op::Set | Op::Add | Op::Multiply | Op::AtLeast | Op::AtMost) => {
            Some(Ty::number())
        }
        (Ty::Bool | Ty::String, Op::Set) => Some(ty.clone()),
        _ => None,
    }
}

/// A `type-mismatch` of an effect value checked against its target field ([`target_type`]) says
/// which field and op it was checked for.
pub fn aimed_at(found: &FoundFormula, code: ErrorCode, message: String) -> String {
    match (&found.target, found.expected.is_none(), code) {
        (Some((field, op)), true, ErrorCode::TypeMismatch) => {
            let op = serde_json::to_value(op)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            format!("the value of `{op}` on the field `{field}`: {message}")
        }
        _ => message,
    }
}

/// EC "Activation": "A condition that reads a derived field is rejected by the build
/// (`type-mismatch`)", and loadRuleset type-checks "as in the build": the first field the condition
/// reads that is not an input.
fn derived_read(text: &str, field_is_input: FieldIsInput<'_>) -> Result<(), (ErrorCode, String)> {
    let parsed = crate::parsed::parse(text);
    let Ok(formula) = &*parsed else {
        return Ok(());
    };
    let lowered = formula.lowered();
    for (_, expr) in lowered.exprs.iter() {
        if let ocf_formula::lowered::Expr::Field(field) = expr
            && field_is_input(field) == Some(false)
        {
            return Err((
                ErrorCode::TypeMismatch,
                format!(
                    "an activation condition reads `{field}`, which is not an input field: \
                     activation is decided before fields are computed"
                ),
            ));
        }
    }
    Ok(())
}

/// Parses and checks one formula: the first error's code and message.
pub fn check_one(text: &str, env: &Env, expected: Option<&Ty>) -> Result<Ty, (ErrorCode, String)> {
    let first = |errors: Vec<ocf_formula::FormulaError>| {
        let e = errors.into_iter().next();
        e.map_or((ErrorCode::FormulaSyntax, String::new()), |e| {
            (e.code, e.message)
        })
    };
    let parsed = crate::parsed::parse(text);
    let parsed = parsed
        .as_ref()
        .as_ref()
        .map_err(|errors| first(errors.clone()))?;
    let ty = parsed.check(env).map_err(first)?;
    if let Some(expected) = expected
        && !ty.fits(expected)
    {
        return Err((
            ErrorCode::TypeMismatch,
            format!("expected {expected}, found {ty}"),
        ));
    }
    Ok(ty)
}

/// RFC 6901 escaping of one pointer segment.
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

struct Collector<'a> {
    out: Vec<FoundFormula>,
    document: Document,
    item_field_type: ItemFieldType<'a>,
}

impl Collector<'_> {
    fn push(
        &mut self,
        pointer: &str,
        formula: &Formula,
        roots: &'static [Root],
        expected: Option<Ty>,
    ) {
        self.out.push(FoundFormula {
            document: self.document,
            pointer: pointer.to_owned(),
            text: formula.as_str().to_owned(),
            roots,
            expected,
            activation: false,
            target: None,
        });
    }

    /// Marks the formulas found since `from` as activation conditions.
    fn conditions_from(&mut self, from: usize) {
        for found in &mut self.out[from..] {
            found.activation = true;
        }
    }

    fn opt(
        &mut self,
        at: &str,
        key: &str,
        formula: &Option<Formula>,
        roots: &'static [Root],
        expected: Option<Ty>,
    ) {
        if let Some(formula) = formula {
            self.push(&format!("{at}/{key}"), formula, roots, expected);
        }
    }

    fn query(&mut self, at: &str, query: Option<&Query>, roots: &'static [Root]) {
        if let Some(query) = query {
            self.opt(at, "where", &query.r#where, roots, Some(Ty::Bool));
        }
    }

    fn item(&mut self, item: &ContentItem) {
        for (name, value) in item.fields.iter() {
            // Item values of integer, decimal, boolean and dice fields are formulas; a number or
            // boolean written bare is one. Strings may be literals of string fields, which only the
            // declaration tells apart: without it they are checked by the engine when read.
            let declared = (self.item_field_type)(item, name);
            if let Some(ty) = declared {
                let text = match value {
                    serde_json::Value::String(text) => text.clone(),
                    serde_json::Value::Number(_) | serde_json::Value::Bool(_) => value.to_string(),
                    // A template's `null` removes the field; other shapes are not formulas.
                    _ => continue,
                };
                if matches!(
                    ty,
                    FieldType::Integer | FieldType::Decimal | FieldType::Boolean | FieldType::Dice
                ) {
                    self.push(
                        &format!("/fields/{}", escape(name)),
                        &Formula(text),
                        CONTENT,
                        field_ty(ty),
                    );
                }
                continue;
            }
            if value.is_number() || value.is_boolean() {
                let formula = Formula(value.to_string());
                self.push(
                    &format!("/fields/{}", escape(name)),
                    &formula,
                    CONTENT,
                    None,
                );
            }
        }
        self.state_and_computed("", &item.state, &item.computed);
        self.effects("", &item.effects);
        self.grants("", &item.grants);
        self.choices("", &item.choices);
        self.actions("", &item.actions);
        for (i, p) in item.prerequisites.iter().enumerate() {
            self.push(
                &format!("/prerequisites/{i}/check"),
                &p.check,
                CONTENT,
                Some(Ty::Bool),
            );
        }
        for (i, q) in item.standard_copies.iter().enumerate() {
            self.query(&format!("/standardCopies/{i}"), Some(q), ITEM_ONLY);
        }
        for (i, immunity) in item.immune_to.iter().enumerate() {
            let at = format!("/immuneTo/{i}");
            let from = self.out.len();
            self.opt(&at, "when", &immunity.when, CONTENT, Some(Ty::Bool));
            self.query(&format!("{at}/query"), immunity.query.as_ref(), CONTENT);
            self.conditions_from(from);
        }
        for (i, kept) in item.keeps_templates.iter().enumerate() {
            let at = format!("/keepsTemplates/{i}");
            self.opt(&at, "when", &kept.when, CONTENT, Some(Ty::Bool));
            self.query(&format!("{at}/copies"), Some(&kept.copies), CONTENT);
        }
        self.follow_ups("", &item.follow_ups);
    }

    fn content_type(&mut self, at: &str, ty: &ContentTypeDecl) {
        self.state_and_computed(at, &ty.state, &ty.computed);
        self.effects(at, &ty.effects);
        self.grants(at, &ty.grants);
        self.actions(at, &ty.actions);
        self.follow_ups(at, &ty.follow_ups);
    }

    fn state_and_computed(
        &mut self,
        at: &str,
        state: &ocf_model::Keyed<ocf_model::StateDecl>,
        computed: &ocf_model::Keyed<ocf_model::ComputedDecl>,
    ) {
        for (key, decl) in state.iter() {
            let at = format!("{at}/state/{}", escape(key));
            if let Some(Computed::Formula { formula }) = &decl.default {
                self.push(&format!("{at}/default/formula"), formula, CHARACTER, None);
            }
            self.opt(&at, "min", &decl.min, CONTENT, Some(Ty::number()));
            self.opt(&at, "max", &decl.max, CONTENT, Some(Ty::number()));
        }
        for (name, decl) in computed.iter() {
            let expected = match decl.r#type {
                ocf_model::ComputedType::Integer => Ty::Int,
                ocf_model::ComputedType::Decimal => Ty::number(),
                ocf_model::ComputedType::Boolean => Ty::Bool,
                ocf_model::ComputedType::String => Ty::String,
            };
            let at = format!("{at}/computed/{}/formula", escape(name));
            self.push(&at, &decl.formula, CONTENT, Some(expected));
        }
    }

    fn grants(&mut self, at: &str, grants: &[ocf_model::Grant]) {
        for (i, grant) in grants.iter().enumerate() {
            let from = self.out.len();
            self.opt(
                &format!("{at}/grants/{i}"),
                "when",
                &grant.when,
                CONTENT,
                Some(Ty::Bool),
            );
            self.conditions_from(from);
        }
    }

    fn effects(&mut self, at: &str, effects: &[std::sync::Arc<Effect>]) {
        for (i, effect) in effects.iter().enumerate() {
            self.effect(&format!("{at}/effects/{i}"), effect);
        }
    }

    fn effect(&mut self, at: &str, effect: &Effect) {
        let roots = match effect.target {
            Target::Rolls { .. } => ROLL_EFFECT,
            _ => EFFECT,
        };
        self.opt(at, "when", &effect.when, roots, Some(Ty::Bool));
        if let Target::Fields { fields } = &effect.target {
            self.push(
                &format!("{at}/target/fields/where"),
                &fields.r#where,
                ITEM_ONLY_CHOICE,
                Some(Ty::Bool),
            );
        }
        match &effect.value {
            Some(EffectValue::Formula(formula)) => {
                self.push(&format!("{at}/value"), formula, roots, None);
                if let (Target::Field(field), Some(found)) = (&effect.target, self.out.last_mut()) {
                    found.target = Some((field.as_str().to_owned(), effect.op));
                }
            }
            Some(EffectValue::Grant(GrantValue::Formula { formula })) => {
                self.push(&format!("{at}/value/formula"), formula, EFFECT, None);
            }
            Some(EffectValue::Grant(GrantValue::Query { query })) => {
                self.query(&format!("{at}/value/query"), Some(query), CONTENT);
            }
            Some(EffectValue::Option(option)) => {
                self.changes(&format!("{at}/value/changes"), &option.changes);
                for (name, f) in option.flags.iter() {
                    self.push(
                        &format!("{at}/value/flags/{}", escape(name)),
                        f,
                        ACTION,
                        None,
                    );
                }
            }
            Some(EffectValue::Changes(changes)) => {
                self.changes(&format!("{at}/value/changes"), &changes.changes);
            }
            Some(EffectValue::RollModifier(modifier)) => {
                let json = serde_json::to_value(modifier).unwrap_or_default();
                self.json_formulas(&format!("{at}/value"), &json, roots);
            }
            _ => {}
        }
        for (i, tag) in effect.tags.iter().enumerate() {
            if let Computed::Formula { formula } = tag {
                self.push(&format!("{at}/tags/{i}/formula"), formula, EFFECT, None);
            }
        }
        // EF: "Their `value` and `by` are formulas seeing `item`, `self` and `incoming`."
        for (i, change) in effect.then.iter().enumerate() {
            let json = serde_json::to_value(change).unwrap_or_default();
            self.json_formulas(&format!("{at}/then/{i}"), &json, THEN);
        }
    }

    fn choices(&mut self, at: &str, choices: &[Choice]) {
        for (i, choice) in choices.iter().enumerate() {
            let at = format!("{at}/choices/{i}");
            let from = self.out.len();
            self.opt(&at, "when", &choice.when, CONTENT, Some(Ty::Bool));
            self.conditions_from(from);
            self.opt(&at, "eligible", &choice.eligible, CONTENT, Some(Ty::Bool));
            self.opt(&at, "slots", &choice.slots, CONTENT, Some(Ty::Int));
            self.opt(&at, "recommend", &choice.recommend, CONTENT, None);
            match &choice.pick {
                Some(PickCount::Exactly(f)) => {
                    self.push(&format!("{at}/pick"), f, CONTENT, Some(Ty::Int))
                }
                Some(PickCount::Range { min, max }) => {
                    self.opt(&format!("{at}/pick"), "min", min, CONTENT, Some(Ty::Int));
                    self.opt(&format!("{at}/pick"), "max", max, CONTENT, Some(Ty::Int));
                }
                None => {}
            }
            match &choice.options {
                ChoiceOptions::Inline(options) => {
                    for (j, option) in options.iter().enumerate() {
                        let at = format!("{at}/options/{j}");
                        for (k, p) in option.prerequisites.iter().enumerate() {
                            self.push(
                                &format!("{at}/prerequisites/{k}/check"),
                                &p.check,
                                CONTENT,
                                Some(Ty::Bool),
                            );
                        }
                        self.effects(&at, &option.effects);
                        self.grants(&at, &option.grants);
                        self.choices(&at, &option.choices);
                    }
                }
                ChoiceOptions::Source(ChoiceSource::Content { content }) => {
                    self.query(&format!("{at}/options/content"), Some(content), CONTENT);
                }
                ChoiceOptions::Source(ChoiceSource::Values { where_, .. }) => {
                    self.opt(
                        &format!("{at}/options"),
                        "where",
                        where_,
                        CONTENT,
                        Some(Ty::Bool),
                    );
                }
                ChoiceOptions::Source(ChoiceSource::Formula { formula }) => {
                    self.push(&format!("{at}/options/formula"), formula, CONTENT, None);
                }
            }
            self.effects(&at, &choice.effects);
        }
    }

    fn actions(&mut self, at: &str, actions: &[Action]) {
        for (i, action) in actions.iter().enumerate() {
            let at = format!("{at}/actions/{i}");
            self.opt(&at, "available", &action.available, ACTION, Some(Ty::Bool));
            for (name, param) in action.params.iter() {
                let at = format!("{at}/params/{}", escape(name));
                match param {
                    ocf_model::ParamEntry::Fixed(f) => self.push(&at, f, ACTION, None),
                    ocf_model::ParamEntry::Declared(decl) => {
                        self.opt(&at, "where", &decl.r#where, ACTION, Some(Ty::Bool));
                    }
                }
            }
            self.steps(&at, &action.steps);
        }
    }

    fn steps(&mut self, at: &str, steps: &[Step]) {
        for (i, step) in steps.iter().enumerate() {
            self.step(&format!("{at}/steps/{i}"), step);
        }
    }

    fn step(&mut self, at: &str, step: &Step) {
        self.opt(at, "when", &step.when, ACTION, Some(Ty::Bool));
        for (i, tag) in step.tags.iter().enumerate() {
            if let Computed::Formula { formula } = tag {
                self.push(&format!("{at}/tags/{i}/formula"), formula, ACTION, None);
            }
        }
        for (i, part) in step.parts.iter().enumerate() {
            let at = format!("{at}/parts/{i}");
            self.opt(&at, "dice", &part.dice, ACTION, None);
            self.opt(&at, "value", &part.value, ACTION, None);
            self.opt(&at, "field", &part.field, ACTION, None);
            self.opt(&at, "when", &part.when, ACTION, Some(Ty::Bool));
            self.opt(&at, "ifEmpty", &part.if_empty, ACTION, None);
        }
        match &step.options {
            Some(StepOptions::Written(options)) => {
                for (i, option) in options.iter().enumerate() {
                    let at = format!("{at}/options/{i}");
                    self.opt(&at, "when", &option.when, ACTION, Some(Ty::Bool));
                    self.changes(&format!("{at}/changes"), &option.changes);
                    for (name, f) in option.flags.iter() {
                        self.push(&format!("{at}/flags/{}", escape(name)), f, ACTION, None);
                    }
                }
            }
            Some(StepOptions::Source(source)) => {
                let json = serde_json::to_value(source).unwrap_or_default();
                self.json_formulas(&format!("{at}/options"), &json, ACTION);
            }
            None => {}
        }
        match &step.recommend {
            Some(StepRecommend::Option(f)) => {
                self.push(&format!("{at}/recommend"), f, ACTION, None)
            }
            Some(StepRecommend::Amounts(amounts)) => {
                for (id, f) in amounts.iter() {
                    self.push(
                        &format!("{at}/recommend/{}", escape(id)),
                        f,
                        ACTION,
                        Some(Ty::Int),
                    );
                }
            }
            None => {}
        }
        self.opt(at, "prefer", &step.prefer, ACTION, None);
        self.opt(at, "random", &step.random, ACTION, None);
        if let Some(repeat) = &step.repeat {
            self.push(
                &format!("{at}/repeat/max"),
                &repeat.max,
                ACTION,
                Some(Ty::Int),
            );
            self.opt(
                &format!("{at}/repeat"),
                "min",
                &repeat.min,
                ACTION,
                Some(Ty::Int),
            );
        }
        self.changes(&format!("{at}/changes"), &step.changes);
        if let Some(fields) = &step.fields {
            self.opt(
                &format!("{at}/fields"),
                "where",
                &fields.r#where,
                ACTION,
                Some(Ty::Bool),
            );
        }
        self.opt(at, "budget", &step.budget, ACTION, Some(Ty::Int));
        self.opt(at, "limit", &step.limit, ACTION, None);
        self.opt(at, "cost", &step.cost, ACTION, None);
        for (i, f) in step.values.iter().enumerate() {
            self.push(&format!("{at}/values/{i}"), f, ACTION, None);
        }
        for (i, case) in step.cases.iter().enumerate() {
            let at = format!("{at}/cases/{i}");
            self.push(&format!("{at}/when"), &case.when, ACTION, Some(Ty::Bool));
            for (name, f) in case.flags.iter() {
                self.push(&format!("{at}/flags/{}", escape(name)), f, ACTION, None);
            }
            self.steps(&at, &case.steps);
        }
        if let Some(otherwise) = &step.r#else {
            let at = format!("{at}/else");
            for (name, f) in otherwise.flags.iter() {
                self.push(&format!("{at}/flags/{}", escape(name)), f, ACTION, None);
            }
            self.steps(&at, &otherwise.steps);
        }
        if let Some(release) = &step.release {
            self.opt(
                &format!("{at}/release"),
                "where",
                &release.r#where,
                ACTION,
                Some(Ty::Bool),
            );
        }
        for (key, map) in [
            ("params", &step.params),
            ("participants", &step.participants),
            ("situational", &step.situational),
            ("data", &step.data),
        ] {
            for (name, f) in map.iter() {
                self.push(&format!("{at}/{key}/{}", escape(name)), f, ACTION, None);
            }
        }
        self.opt(at, "source", &step.source, ACTION, None);
        self.opt(at, "entry", &step.entry, ACTION, None);
        self.opt(at, "result", &step.result, ACTION, Some(Ty::String));
    }

    fn follow_ups(&mut self, at: &str, follow_ups: &[FollowUp]) {
        for (i, f) in follow_ups.iter().enumerate() {
            let at = format!("{at}/followUps/{i}");
            self.opt(&at, "while", &f.r#while, ACTION, Some(Ty::Bool));
            self.opt(&at, "on", &f.on, ACTION, None);
            self.opt(&at, "becomes", &f.becomes, ACTION, None);
            self.changes(&format!("{at}/changes"), &f.changes);
            for (name, formula) in f.params.iter() {
                self.push(
                    &format!("{at}/params/{}", escape(name)),
                    formula,
                    ACTION,
                    None,
                );
            }
        }
    }

    /// A change's formulas: its formula-valued keys, read from its JSON (one struct holds every
    /// change type's keys).
    fn changes(&mut self, at: &str, changes: &[Change]) {
        for (i, change) in changes.iter().enumerate() {
            let json = serde_json::to_value(change).unwrap_or_default();
            self.json_formulas(&format!("{at}/{i}"), &json, ACTION);
        }
    }

    /// The formulas of a structure known only as JSON: the strings and numbers under keys that hold
    /// formulas in changes, roll modifiers and step sources.
    fn json_formulas(&mut self, at: &str, json: &serde_json::Value, roots: &'static [Root]) {
        const FORMULA_KEYS: &[&str] = &[
            "when", "forEach", "value", "by", "limit", "equipped", "source", "active", "template",
            "option", "formula", "where", "item", "quantity", "below", "count", "steps", "factor",
            "at",
        ];
        let serde_json::Value::Object(map) = json else {
            return;
        };
        for (key, value) in map {
            let here = format!("{at}/{}", escape(key));
            match value {
                serde_json::Value::String(_)
                | serde_json::Value::Number(_)
                | serde_json::Value::Bool(_)
                    if FORMULA_KEYS.contains(&key.as_str()) =>
                {
                    let text = match value {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    // `entry: self` / `entry: picked` and `pick: self` are keywords, not formulas.
                    if key == "entry" && matches!(text.as_str(), "self" | "picked") {
                        continue;
                    }
                    self.push(&here, &Formula(text), roots, None);
                }
                serde_json::Value::Object(_)
                    if !matches!(key.as_str(), "to" | "split" | "choices" | "path" | "state") =>
                {
                    self.json_formulas(&here, value, roots)
                }
                serde_json::Value::Array(items) if matches!(key.as_str(), "faces") => {
                    for (i, item) in items.iter().enumerate() {
                        if let serde_json::Value::String(s) = item {
                            self.push(&format!("{here}/{i}"), &Formula(s.clone()), roots, None);
                        }
                    }
                }
                // A change's computed tags (`tags: [damage, { formula }]`), as a step's are.
                serde_json::Value::Array(items) if matches!(key.as_str(), "tags") => {
                    for (i, item) in items.iter().enumerate() {
                        if let Some(serde_json::Value::String(s)) = item.get("formula") {
                            let at = format!("{here}/{i}/formula");
                            self.push(&at, &Formula(s.clone()), roots, None);
                        }
                    }
                }
                serde_json::Value::Object(_) | serde_json::Value::Array(_) => {}
                _ => {}
            }
        }
    }
}

/// A field-set query in a choice's effects may read `pick` and `slot` too.
const ITEM_ONLY_CHOICE: &[Root] = ITEM_ONLY;
