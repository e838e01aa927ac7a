//! Classifying a roll (EA "Rolling", the step's result; "Classifying an earlier roll again"): the
//! result's members, the tallies, and the first band of the step's set whose `when` holds.

use ocf_formula::{Root, Value};
use ocf_model::{Action, BandSet, Declared, Namespace, Op, Results, Ruleset};

use super::build::Built;
use super::rolling::Rolled;
use crate::context::{ActionContext, set_member};
use crate::error::ActionError;
use crate::run::Frame;

/// The band set `id` names, from `pack`: its qualified ID and declaration.
pub fn band_set<'r>(
    ruleset: &'r Ruleset,
    pack: &str,
    id: &str,
) -> Option<(String, &'r Declared<BandSet>)> {
    let qualified = ruleset
        .resolve(pack, id, Namespace::Bands)
        .unwrap_or_else(|| id.to_owned());
    ruleset.bands.get(&qualified).map(|s| (qualified, s))
}

/// Each declared tally visible from `pack`, summed from the roll's tally effects.
pub fn tallies(ruleset: &Ruleset, built: &Built<'_>) -> Vec<(String, i64)> {
    let mut names: Vec<String> = Vec::new();
    for (_, list) in ruleset.roll_tallies.iter() {
        for n in list {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of = |op: Op| {
                built
                    .tallies
                    .iter()
                    .filter(|(n, o, _)| *n == name && *o == op)
                    .map(|(_, _, v)| *v)
                    .collect::<Vec<i64>>()
                    .into_iter()
            };
            let mut v: i64 = of(Op::Add).sum();
            if let Some(least) = of(Op::AtLeast).max() {
                v = v.max(least);
            }
            if let Some(most) = of(Op::AtMost).min() {
                v = v.min(most);
            }
            (name.clone(), v)
        })
        .collect()
}

/// The result value of a rolled roll, without its band.
pub fn result_value(rolled: &Rolled, empty: bool) -> Value {
    let items = serde_json::to_value(&rolled.items).unwrap_or_default();
    result_value_with(rolled, empty, &items)
}

/// [`result_value`], with the roll's items already as JSON (the log's `items`).
pub fn result_value_with(rolled: &Rolled, empty: bool, items: &serde_json::Value) -> Value {
    let mut faces = Vec::new();
    let mut kept = Vec::new();
    for item in &rolled.items {
        for f in item.faces.iter().flatten() {
            faces.push(Value::Int(f.value));
            if f.kept {
                kept.push(Value::Int(f.value));
            }
        }
    }
    let tallies = Value::map(
        rolled
            .tallies
            .iter()
            .map(|(n, v)| (n.as_str(), Value::Int(*v))),
    );
    Value::map([
        ("total", Value::Int(rolled.total)),
        ("faces", Value::list(faces)),
        ("kept", Value::list(kept)),
        ("empty", Value::Bool(empty)),
        ("items", Value::from_json(items).unwrap_or_default()),
        ("tallies", tallies),
        (
            "bounds",
            Value::from_json(&serde_json::Value::Array(rolled.bounds.clone())).unwrap_or_default(),
        ),
        ("unbounded", Value::Int(rolled.unbounded)),
    ])
}

/// Adds `band`, `bandValue` and `bandSet` to `result` by the step's `bands`, in `ctx` (the step's
/// band context) with `roll` bound to the result.
pub fn classify(
    ruleset: &Ruleset,
    pack: &str,
    bands: Option<&str>,
    ctx: &mut ActionContext<'_>,
    mut result: Value,
) -> Result<Value, ActionError> {
    // A band-less result still drops a stale band (a roll classified again).
    for key in ["band", "bandValue", "bandSet"] {
        if let Value::Map(m) = &mut result {
            std::sync::Arc::make_mut(m).remove(key);
        }
    }
    let Some(id) = bands else {
        return Ok(result);
    };
    let Some((qualified, set)) = band_set(ruleset, pack, id) else {
        return Err(
            ActionError::new("unknown-reference", format!("no band set `{id}`"))
                .with("kind", "bands")
                .with("id", id),
        );
    };
    ctx.bind(Root::Roll, result.clone());
    if let Some(value) = &set.decl.value {
        let v = ctx.eval(value.as_str())?;
        set_member(&mut result, "value", v.clone());
        set_member(&mut result, "bandValue", v);
        ctx.bind(Root::Roll, result.clone());
    }
    for band in &set.decl.bands {
        if ctx.condition(band.when.as_str())? {
            set_member(&mut result, "band", Value::string(band.id.as_str()));
            set_member(&mut result, "bandSet", Value::string(qualified.as_str()));
            break;
        }
    }
    if let Value::Map(m) = &mut result {
        std::sync::Arc::make_mut(m).remove("value");
    }
    Ok(result)
}

/// `undeclared-result`: a result the action's `results` doesn't list.
pub fn check_result(ruleset: &Ruleset, frame: &Frame<'_>, result: &str) -> Result<(), ActionError> {
    if declares_result(ruleset, frame.def, frame.pack, result) {
        Ok(())
    } else {
        Err(ActionError::new(
            "undeclared-result",
            format!("the action doesn't declare `{result}`"),
        )
        .with("result", result))
    }
}

/// Whether `def` (of `pack`) may finish with `result`: any when it declares no `results`.
pub fn declares_result(ruleset: &Ruleset, def: &Action, pack: &str, result: &str) -> bool {
    match &def.results {
        None => true,
        Some(Results::List(list)) => list.iter().any(|r| r == result),
        Some(Results::Bands { bands }) => band_set(ruleset, pack, bands.as_str())
            .is_some_and(|(_, set)| set.decl.bands.iter().any(|b| b.id == result)),
    }
}
