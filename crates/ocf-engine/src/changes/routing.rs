//! Routing an adjust (EF, "Targets" incoming changes, "The incoming amount", "Dice on incoming
//! changes", "Fixed order", "Rounding", "Stacking"): the receiver's incoming-change effects whose
//! `fields` and `tags` match change the amount, in the fixed order (set, add, multiply rounding
//! after each, then the highest `atLeast` and the lowest `atMost`); then the amount lands on the
//! field through its absorbing fields and overflow, bounded by `maxOverflowChain`.

use std::sync::Arc;

use ocf_dice::error::DiceError;
use ocf_dice::faces::{DiceFunction, FaceRequest};
use ocf_formula::decimal::Millionths;
use ocf_formula::{Root, Value};
use ocf_model::{ChangeType, EffectValue, Op, Recommend, Rounding, StackPolicy, Target};
use serde_json::{Value as Json, json};

use super::MAX_OVERFLOW_CHAIN;
use super::applier::{Applier, type_mismatch};
use super::batch::{Adjustment, ChangeError};
use super::eval::{OwnedSelf, Scope};
use super::fields::{add, clamp, millionths};
use super::situational::Selected;
use crate::db::Instance;

/// An adjust after its incoming-change effects.
pub struct Routed {
    pub amount: Value,
    /// Each effect that counted, in application order: `{ source, op, value }`.
    pub steps: Vec<Json>,
    /// Every face the effects' dice used, the change's own first.
    pub faces: Vec<i64>,
    /// How many of the given faces it used.
    pub given_used: usize,
    /// The counted effects with `then` changes, and the scope they see.
    pub thens: Vec<(Arc<Instance>, Scope)>,
}

/// An effect whose `when` held, with its value.
struct Counted {
    instance: Arc<Instance>,
    value: Value,
    scope: Scope,
}

/// Faces from the change's `faces`, then from the dice function; every face given is kept, to be
/// written into the returned batch.
struct Faces<'a, 'd> {
    given: &'a [i64],
    next: usize,
    dice: Option<&'a mut (dyn DiceFunction + 'd)>,
    used: Vec<i64>,
}

impl DiceFunction for Faces<'_, '_> {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        let face = if let Some(face) = self.given.get(self.next) {
            self.next += 1;
            *face
        } else if let Some(dice) = self.dice.as_deref_mut() {
            dice.face(request)?
        } else {
            return Err(DiceError::NoMoreFaces { request: *request });
        };
        self.used.push(face);
        Ok(face)
    }
}

impl Applier<'_, '_> {
    /// The character's incoming-change effect instances that match an adjust of `field` with
    /// `tags`: `fields` (resolved in the effect's pack) holds the field, and a target tag matches
    /// one of the change's tags (EF, "Tag matching"); an absent filter matches every adjust.
    fn incoming_instances(
        &self,
        field: &str,
        tags: &[String],
        situational: &Selected,
    ) -> Vec<Arc<Instance>> {
        let c = self.input();
        let mut all: Vec<Arc<Instance>> = self.deep(move |db| {
            crate::db::effect_instances(db, c)
                .list
                .iter()
                .filter(|i| matches!(i.effect.target, Target::Incoming { .. }))
                .map(|i| i.instance.clone())
                .collect()
        });
        // The selected situational choices' own incoming-change effects, after the character's.
        for id in &situational.selected {
            let Some(decl) = self.ruleset.situational.get(id) else {
                continue;
            };
            for (i, effect) in decl.decl.effects.iter().enumerate() {
                if !matches!(effect.target, Target::Incoming { .. }) {
                    continue;
                }
                let key = effect.id.clone().unwrap_or_else(|| i.to_string());
                all.push(Arc::new(Instance::unowned(
                    crate::effects::SourceKind::Situational,
                    id,
                    format!("{id}#{key}"),
                    effect,
                    &decl.pack,
                )));
            }
        }
        all.into_iter()
            .filter(|instance| {
                let Target::Incoming { incoming } = &instance.effect.target else {
                    return false;
                };
                let fields_match = incoming.fields.as_ref().is_none_or(|fields| {
                    fields.iter().any(|f| {
                        let f = f.as_str();
                        f == field
                            || self
                                .ruleset
                                .resolve(&instance.pack, f, ocf_model::Namespace::Field)
                                .is_some_and(|q| q == field)
                    })
                });
                let tags_match = incoming.tags.as_ref().is_none_or(|wanted| {
                    wanted.iter().any(|t| {
                        tags.iter()
                            .any(|tag| ocf_model::tag_matches(t.as_str(), tag))
                    })
                });
                fields_match && tags_match
            })
            .collect()
    }

    /// What an instance's formulas see: its pack, `self` its copy or applied entry, `item` its
    /// item with the copy's templates, and `incoming`.
    fn instance_scope(&self, instance: &Instance, incoming: &Value, situational: &Value) -> Scope {
        let self_ref = match (instance.copy, instance.applied_entry) {
            (Some(copy), _) => OwnedSelf::Copy(copy),
            (None, Some(i)) => match self.file.applied.get(i) {
                Some(entry) => OwnedSelf::Value(crate::view::applied_self(&self.ruleset, entry)),
                None => OwnedSelf::None,
            },
            (None, None) => OwnedSelf::None,
        };
        Scope {
            pack: instance.pack.to_string(),
            self_ref,
            item: (!instance.item.is_empty())
                .then(|| (instance.item.to_string(), instance.templates.to_vec())),
            pick: instance.pick.clone(),
            slot: instance.slot,
            roots: vec![
                (Root::Incoming, incoming.clone()),
                (Root::Situational, situational.clone()),
            ],
        }
    }

    /// The incoming-change effects on an adjust of `field` by `by` with `tags`.
    pub fn route(
        &mut self,
        path: &str,
        field: &str,
        by: &Value,
        tags: &[String],
        faces: &[i64],
        situational: &Selected,
    ) -> Result<Routed, ChangeError> {
        let incoming = super::fields::incoming_value(by, field, tags);
        let mut counted: Vec<Counted> = Vec::new();
        for instance in self.incoming_instances(field, tags, situational) {
            let scope = self.instance_scope(&instance, &incoming, &situational.values);
            let at = |what: &str| format!("{path}/effects/{}/{what}", instance.option_id);
            let judged: Result<Option<Value>, ChangeError> = (|| {
                if let Some(when) = &instance.effect.when
                    && !self.eval_bool(when, &scope, &at("when"))?
                {
                    return Ok(None);
                }
                let Some(EffectValue::Formula(f)) = &instance.effect.value else {
                    return Ok(None);
                };
                let value = self.eval(f.as_str(), &scope, &at("value"))?;
                match (&value, instance.effect.op) {
                    (Value::Int(_) | Value::Decimal(_), _) => {}
                    (Value::Dice(_), Op::Add) => {}
                    (other, _) => return Err(type_mismatch(&at("value"), "a number", other)),
                }
                Ok(Some(value))
            })();
            let Some(value) = judged.map_err(|e| in_effect(e, path, &instance))? else {
                continue;
            };
            counted.push(Counted {
                instance,
                value,
                scope,
            });
        }
        let integer = matches!(
            self.ruleset.field(field).map(|d| d.decl.r#type),
            Some(ocf_model::FieldType::Integer)
        );
        let settings = &self.ruleset.settings;
        let mut kept: Vec<Counted> = Vec::new();
        for op in [Op::Set, Op::Add, Op::Multiply, Op::AtLeast, Op::AtMost] {
            let of_op: Vec<Counted> = counted
                .iter()
                .filter(|c| c.instance.effect.op == op)
                .map(|c| Counted {
                    instance: c.instance.clone(),
                    value: c.value.clone(),
                    scope: c.scope.clone(),
                })
                .collect();
            kept.extend(stack(settings, of_op));
        }
        let mut amount = by.clone();
        let mut steps = Vec::new();
        let mut thens = Vec::new();
        let step = |c: &Counted, value: &Value| {
            json!({
                "source": c.instance.source.to_json(),
                "id": c.instance.option_id,
                "op": crate::report::op_name(c.instance.effect.op),
                "value": value.to_json(),
            })
        };
        let at = format!("{path}/by");
        // set: the rules' recommended option of the competing ones (EF: the other calls "use
        // each group's recommended option").
        let sets: Vec<&Counted> = kept
            .iter()
            .filter(|c| c.instance.effect.op == Op::Set)
            .collect();
        let recommend = settings
            .competing
            .as_ref()
            .and_then(|c| c.recommend)
            .unwrap_or(Recommend::Highest);
        let chosen = match recommend {
            Recommend::First => sets.first().copied(),
            Recommend::Last => sets.last().copied(),
            Recommend::Highest => sets.iter().copied().reduce(|a, b| {
                if millionths(&b.value) > millionths(&a.value) {
                    b
                } else {
                    a
                }
            }),
            Recommend::Lowest => sets.iter().copied().reduce(|a, b| {
                if millionths(&b.value) < millionths(&a.value) {
                    b
                } else {
                    a
                }
            }),
        };
        if let Some(set) = chosen {
            // A decimal is kept: it rounds once, at the end (EF, "Rounding").
            amount = set.value.clone();
            steps.push(step(set, &set.value));
        }
        // add: numbers, and dice rolled now.
        let mut faces_fn = Faces {
            given: faces,
            next: 0,
            dice: self.dice.as_deref_mut(),
            used: Vec::new(),
        };
        let mut rolled_steps = Vec::new();
        for c in kept.iter().filter(|c| c.instance.effect.op == Op::Add) {
            let value = match &c.value {
                Value::Dice(d) => {
                    let roll = ocf_dice::roll::roll(
                        d,
                        &mut faces_fn,
                        &ocf_dice::limits::DiceLimits::default(),
                    )
                    .map_err(|e| {
                        ChangeError::new(e.code(), &at, format!("{}: {e}", c.instance.option_id))
                    })?;
                    Value::Int(roll.total)
                }
                other => other.clone(),
            };
            amount = add(&amount, &value, &at)?;
            rolled_steps.push((c, value));
        }
        let used = std::mem::take(&mut faces_fn.used);
        let given_used = faces_fn.next;
        drop(faces_fn);
        for (c, value) in rolled_steps {
            steps.push(step(c, &value));
        }
        // multiply, in instance order, an integer amount rounding after each.
        for c in kept.iter().filter(|c| c.instance.effect.op == Op::Multiply) {
            let product = amount
                .as_millionths()
                .zip(c.value.as_millionths())
                .and_then(|(a, b)| a.checked_mul(b).ok())
                .ok_or_else(|| {
                    ChangeError::new("arithmetic-overflow", &at, "the product is out of range")
                })?;
            amount = if integer {
                let rounding = c
                    .instance
                    .effect
                    .rounding
                    .or(settings.round_incoming)
                    .or(self.ruleset.field(field).and_then(|d| d.decl.rounding))
                    .or(settings.rounding)
                    .unwrap_or(Rounding::Floor);
                Value::Int(round(product, rounding).map_err(|_| {
                    ChangeError::new("arithmetic-overflow", &at, "the product is out of range")
                })?)
            } else {
                Value::Decimal(product.to_decimal().map_err(|_| {
                    ChangeError::new("arithmetic-overflow", &at, "the product is out of range")
                })?)
            };
            steps.push(step(c, &c.value));
        }
        // The highest atLeast raises, then the lowest atMost lowers.
        let bound = |op: Op, highest: bool| {
            kept.iter()
                .filter(|c| c.instance.effect.op == op)
                .reduce(|a, b| {
                    let better = if highest {
                        millionths(&b.value) > millionths(&a.value)
                    } else {
                        millionths(&b.value) < millionths(&a.value)
                    };
                    if better { b } else { a }
                })
        };
        // A bound takes the amount to its value as written: a decimal rounds at the end.
        if let Some(c) = bound(Op::AtLeast, true)
            && millionths(&c.value) > millionths(&amount)
        {
            amount = c.value.clone();
            steps.push(step(c, &c.value));
        }
        if let Some(c) = bound(Op::AtMost, false)
            && millionths(&c.value) < millionths(&amount)
        {
            amount = c.value.clone();
            steps.push(step(c, &c.value));
        }
        // EF "Rounding": "Any other decimal an integer field ends up with (from a formula, or an
        // `add` with a decimal value) rounds once, at the end, by the field's `rounding`, else the
        // game's" (`settings.rounding`, default floor); `roundIncoming` is for `multiply` alone.
        if integer && let Value::Decimal(d) = &amount {
            let rounding = self
                .ruleset
                .field(field)
                .and_then(|d| d.decl.rounding)
                .or(settings.rounding)
                .unwrap_or(Rounding::Floor);
            let m = Value::Decimal(*d).as_millionths().ok_or_else(|| {
                ChangeError::new("arithmetic-overflow", &at, "the amount is out of range")
            })?;
            amount = Value::Int(round(m, rounding).map_err(|_| {
                ChangeError::new("arithmetic-overflow", &at, "the amount is out of range")
            })?);
        }
        for c in &kept {
            if !c.instance.effect.then.is_empty() {
                thens.push((c.instance.clone(), c.scope.clone()));
            }
        }
        Ok(Routed {
            amount,
            steps,
            faces: used,
            given_used,
            thens,
        })
    }

    /// The counted effects' `then` changes on their own copies, each reported in `adjustments`;
    /// not adjusts, so nothing routes or triggers on them (EF).
    pub fn then_changes(&mut self, path: &str, routed: &Routed) -> Result<(), ChangeError> {
        for (instance, scope) in &routed.thens {
            let target = match (instance.copy, instance.applied_entry) {
                (Some(copy), _) => {
                    let id = self.deep(move |db| copy.id(db).clone());
                    super::targets::Target::Copy(id)
                }
                (None, Some(i)) => super::targets::Target::Applied(i),
                (None, None) => continue,
            };
            for (j, then) in instance.effect.then.iter().enumerate() {
                let at = format!("{path}/effects/{}/then/{j}", instance.option_id);
                let Some(key) = &then.key else {
                    return Err(ChangeError::new(
                        "schema-error",
                        at,
                        "a `then` change needs `key`",
                    ));
                };
                let adjust = then.r#type == ChangeType::AdjustState;
                let formula = if adjust { &then.by } else { &then.value };
                let Some(formula) = formula else {
                    return Err(ChangeError::new(
                        "schema-error",
                        at,
                        "a `then` change needs `value` or `by`",
                    ));
                };
                let value = self
                    .eval(formula.as_str(), scope, &at)
                    .map_err(|e| in_effect(e, path, instance))?;
                let written = self
                    .write_state(&at, &target, key, value, adjust)
                    .map_err(|e| in_effect(e, path, instance))?;
                let entry = self.target_id(&target);
                self.adjustments.push(Adjustment {
                    entry,
                    key: key.clone(),
                    value: written.to_json(),
                    source: instance.source.to_json(),
                });
            }
        }
        Ok(())
    }

    /// Lands `amount` on `field`: harm goes first to the fields absorbing it, each down to its
    /// `min` (else 0); what is left goes to the field. Harm that would take a field with
    /// `overflow` past its `min` (else 0) stops there, and the rest goes on to the overflow field,
    /// routed the same way; every field passed counts toward `maxOverflowChain`. A field is kept
    /// within its `min` and `max` (5E: "hit points never below 0"). Each field changed is one
    /// `{ field, by, from, to }`.
    pub fn place(
        &mut self,
        path: &str,
        field: &str,
        amount: &Value,
    ) -> Result<Vec<Json>, ChangeError> {
        let mut out = Vec::new();
        let mut field = field.to_owned();
        let mut amount = amount.clone();
        let mut passed = 0usize;
        let zero = Value::Int(0);
        // Fields saved by this adjust: one reached again (an overflow chain that loops back) is
        // read after the session is brought to the file.
        let mut saved: Vec<String> = Vec::new();
        loop {
            passed += 1;
            if saved.contains(&field) {
                self.sync();
                saved.clear();
            }
            if passed > MAX_OVERFLOW_CHAIN {
                return Err(ChangeError::new(
                    "safety-limit-exceeded",
                    format!("{path}/field"),
                    format!("the adjust passes more than {MAX_OVERFLOW_CHAIN} fields"),
                )
                .with_data(json!({ "limit": "maxOverflowChain" })));
            }
            if millionths(&amount) < 0 {
                let absorbers: Vec<String> = self
                    .ruleset
                    .fields
                    .iter()
                    .filter(|(_, d)| d.decl.input == Some(true))
                    .filter(|(_, d)| {
                        d.decl.absorbs.iter().any(|a| {
                            a.as_str() == field
                                || self
                                    .ruleset
                                    .resolve(&d.pack, a.as_str(), ocf_model::Namespace::Field)
                                    .is_some_and(|q| q == field)
                        })
                    })
                    .map(|(id, _)| id.to_owned())
                    .collect();
                for absorber in absorbers {
                    if millionths(&amount) >= 0 {
                        break;
                    }
                    passed += 1;
                    let have = self.raw(&absorber);
                    let (min, _) = self.bounds(&absorber, &format!("{path}/field"))?;
                    let floor = min.unwrap_or(zero.clone());
                    let room = millionths(&have) - millionths(&floor);
                    if room <= 0 {
                        continue;
                    }
                    let take = room.min(-millionths(&amount));
                    let take = from_millionths(take, &have);
                    let to = sub(&have, &take, path)?;
                    self.save(&absorber, to.to_json());
                    saved.push(absorber.clone());
                    amount = add(&amount, &take, path)?;
                    out.push(json!({
                        "field": absorber,
                        "by": neg(&take).to_json(),
                        "from": have.to_json(),
                        "to": to.to_json(),
                    }));
                }
            }
            let have = self.raw(&field);
            let (min, max) = self.bounds(&field, &format!("{path}/field"))?;
            let target = add(&have, &amount, path)?;
            let overflow = self.ruleset.field(&field).and_then(|d| {
                let o = d.decl.overflow.as_ref()?;
                Some(
                    self.ruleset
                        .resolve(&d.pack, o.as_str(), ocf_model::Namespace::Field)
                        .unwrap_or_else(|| o.as_str().to_owned()),
                )
            });
            let floor = min.clone().unwrap_or(zero.clone());
            if let Some(next) = overflow
                && millionths(&amount) < 0
                && millionths(&target) < millionths(&floor)
            {
                let landed = clamp(&floor, None, max.as_ref());
                let landed = super::fields::typed(
                    self.ruleset.field(&field).map(|d| d.decl.r#type),
                    landed,
                    path,
                )?;
                self.save(&field, landed.to_json());
                saved.push(field.clone());
                out.push(json!({
                    "field": field,
                    "by": sub(&landed, &have, path)?.to_json(),
                    "from": have.to_json(),
                    "to": landed.to_json(),
                }));
                amount = sub(&target, &landed, path)?;
                field = self.input_field(&next, &format!("{path}/field"))?;
                continue;
            }
            let landed = clamp(&target, min.as_ref(), max.as_ref());
            self.save(&field, landed.to_json());
            out.push(json!({
                "field": field,
                "by": sub(&landed, &have, path)?.to_json(),
                "from": have.to_json(),
                "to": landed.to_json(),
            }));
            return Ok(out);
        }
    }
}

/// An error of an incoming-change effect's formula, reported at the adjust that met it (the
/// effect is not a place in the batch): `data.effect` the competing-option ID, `data.source` its
/// source and `data.at` where in the effect (`when`, `value`, `then/0`), beside the error's own
/// data (decisions.md, issue 36).
fn in_effect(mut error: ChangeError, path: &str, instance: &Instance) -> ChangeError {
    let at = error
        .path
        .strip_prefix(&format!("{path}/effects/{}/", instance.option_id))
        .unwrap_or("")
        .to_owned();
    if !error.path.starts_with(&format!("{path}/effects/")) {
        return error;
    }
    let mut data = match error.data.take().map(|d| *d) {
        Some(Json::Object(map)) => map,
        Some(other) => {
            let mut map = serde_json::Map::new();
            map.insert("detail".into(), other);
            map
        }
        None => serde_json::Map::new(),
    };
    data.insert("effect".into(), instance.option_id.clone().into());
    data.insert("source".into(), instance.source.to_json());
    data.insert("at".into(), at.into());
    error.path = path.to_owned();
    error.with_data(Json::Object(data))
}

/// Stacking (EF, "Stacking") of one op's counted effects: effects with a `stackKey` group by key
/// (`source` meaning each source content's own group) and the key's policy keeps one or all;
/// `playerChooses` keeps the recommended (highest) one, as every call but computeSheet does.
fn stack(settings: &ocf_model::Settings, counted: Vec<Counted>) -> Vec<Counted> {
    let mut keep = vec![true; counted.len()];
    let groups = crate::effects::stack_groups(settings, counted.iter().map(|c| &*c.instance));
    for crate::effects::StackGroup {
        policy, members, ..
    } in &groups
    {
        let highest = match policy {
            StackPolicy::AddAll => continue,
            StackPolicy::HighestOnly | StackPolicy::PlayerChooses => true,
            StackPolicy::LowestOnly => false,
        };
        let mut best = members[0];
        for &m in &members[1..] {
            let (a, b) = (doubled(&counted[m].value), doubled(&counted[best].value));
            if (highest && a > b) || (!highest && a < b) {
                best = m;
            }
        }
        for &m in members {
            if m != best {
                keep[m] = false;
            }
        }
    }
    counted
        .into_iter()
        .zip(keep)
        .filter_map(|(c, k)| k.then_some(c))
        .collect()
}

/// Twice a value's average (dice compare by average).
fn doubled(value: &Value) -> i128 {
    match value {
        Value::Dice(d) => d.doubled_average() * 1_000_000,
        other => millionths(other) * 2,
    }
}

fn round(m: Millionths, rounding: Rounding) -> Result<i64, ocf_formula::decimal::ArithError> {
    match rounding {
        Rounding::Floor => m.floor(),
        Rounding::Ceil => m.ceil(),
        Rounding::Round => m.round(),
    }
}

/// Millionths as a value of `like`'s kind.
fn from_millionths(m: i128, like: &Value) -> Value {
    match like {
        Value::Int(_) => Value::Int((m / 1_000_000) as i64),
        _ => ocf_formula::decimal::Decimal::from_millionths(m as i64)
            .map(Value::Decimal)
            .unwrap_or(Value::Null),
    }
}

fn neg(v: &Value) -> Value {
    match v {
        Value::Int(n) => Value::Int(-n),
        Value::Decimal(d) => d.checked_neg().map(Value::Decimal).unwrap_or(Value::Null),
        other => other.clone(),
    }
}

fn sub(a: &Value, b: &Value, at: &str) -> Result<Value, ChangeError> {
    add(a, &neg(b), at)
}
