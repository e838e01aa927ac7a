//! The roll summary (EA "The roll summary"): what the roll is rolled against, worked out before
//! any face, in the step's band context. Output only: it never fails the action and a replay never
//! reads it.
//!
//! Each band's `when` (and the set's `value`) is *resolved*: every maximal subexpression that
//! doesn't read `roll` becomes its value as a literal, literal guards decide as evaluation would,
//! and the tree is printed back with the standard printer's spacing. The bands that can't hold
//! any more are left out, the list stops at the first that holds whatever the roll, and a
//! conjunction of plain comparisons of a roll path with a number becomes structured `tests`.

use std::sync::Arc;

use ocf_formula::Value;
use ocf_formula::bounded::BoundedTable;
use ocf_formula::partial::{Node, NodeId, Plan, Resolved};
use ocf_syntax::ast::BinaryOp;
use serde_json::{Value as Json, json};

use crate::context::ActionContext;
use crate::run::{Frame, data_json};

pub fn summary(
    ruleset: &ocf_model::Ruleset,
    frame: &Frame<'_>,
    ctx: &ActionContext<'_>,
    bands: Option<&str>,
) -> Json {
    let mut out = serde_json::Map::with_capacity(4);
    if let Some(id) = bands
        && let Some((qualified, set)) = super::classify::band_set(ruleset, frame.pack, id)
    {
        out.insert("bandSet".into(), json!(qualified));
        if let Some(v) = &set.decl.value {
            let plan = plan(ruleset, v.as_str());
            let text = match plan.as_deref() {
                Some(plan) => plan.resolve(ctx).text(),
                None => v.as_str().to_owned(),
            };
            out.insert("value".into(), json!(text));
        }
        let mut list = Vec::with_capacity(set.decl.bands.len());
        for band in &set.decl.bands {
            let plan = plan(ruleset, band.when.as_str());
            let node = plan.as_deref().map(|plan| plan.resolve(ctx));
            let text = match &node {
                Some(node) => node.text(),
                None => band.when.as_str().to_owned(),
            };
            match node.as_ref().and_then(Resolved::literal_bool) {
                // It can't hold: left out.
                Some(false) => continue,
                // It holds whatever the roll: no later band can be reached.
                Some(true) => {
                    list.push(json!({ "band": band.id, "when": text, "tests": [] }));
                    break;
                }
                None => {}
            }
            let mut entry = serde_json::Map::with_capacity(3);
            entry.insert("band".into(), json!(band.id));
            entry.insert("when".into(), json!(text));
            if let Some(tests) = node.as_ref().and_then(tests) {
                entry.insert("tests".into(), Json::Array(tests));
            }
            list.push(Json::Object(entry));
        }
        out.insert("bands".into(), Json::Array(list));
    }
    out.insert("flags".into(), data_json(&frame.flags));
    Json::Object(out)
}

/// How a band's condition or a set's `value` resolves ([`Plan`]): the load plans the band sets'
/// texts with the ruleset (`ocf_load::parsed::Kept::plan`), so a roll only evaluates the planned
/// subexpressions. A ruleset that wasn't loaded (or a text it doesn't hold) is planned here once
/// per text: the texts are the rulesets' own, so the table holds what the rulesets write, and past
/// [`MAX_PLANS`] a text is planned again at each read.
fn plan(ruleset: &ocf_model::Ruleset, text: &str) -> Option<Arc<Plan>> {
    if let Some(found) = ruleset
        .parsed
        .get::<ocf_load::parsed::Kept>()
        .and_then(|kept| kept.plan(text))
    {
        return Some(Arc::clone(found));
    }
    static PLANS: BoundedTable<Box<str>, Option<Arc<Plan>>> = BoundedTable::new(MAX_PLANS);
    PLANS.get_or_make(text, || {
        (text.into(), Plan::of_text(text, "roll").map(Arc::new))
    })
}

/// How many plans [`plan`] keeps.
const MAX_PLANS: usize = 1 << 14;

/// The structured tests of a resolved condition: a conjunction of comparisons, each between a
/// roll path and a number literal, the roll path on the left. `None` for anything else.
fn tests(node: &Resolved<'_>) -> Option<Vec<Json>> {
    let mut operands = Vec::new();
    conjuncts(node, node.root(), &mut operands);
    operands.into_iter().map(|id| test(node, id)).collect()
}

fn conjuncts(node: &Resolved<'_>, id: NodeId, out: &mut Vec<NodeId>) {
    match node.node(id) {
        Node::Bin(BinaryOp::And, l, r) => {
            conjuncts(node, *l, out);
            conjuncts(node, *r, out);
        }
        Node::Paren(inner) if matches!(node.node(*inner), Node::Bin(BinaryOp::And, ..)) => {
            conjuncts(node, *inner, out)
        }
        _ => out.push(id),
    }
}

fn test(node: &Resolved<'_>, id: NodeId) -> Option<Json> {
    let id = match node.node(id) {
        Node::Paren(inner) => *inner,
        _ => id,
    };
    let Node::Bin(op, l, r) = node.node(id) else {
        return None;
    };
    let (l, r) = (*l, *r);
    let (path, number, flipped) = match (
        roll_path(node, l),
        number(node, r),
        roll_path(node, r),
        number(node, l),
    ) {
        (Some(p), Some(n), _, _) => (p, n, false),
        (_, _, Some(p), Some(n)) => (p, n, true),
        _ => return None,
    };
    let compare = match (op, flipped) {
        (BinaryOp::Lt, false) | (BinaryOp::Gt, true) => "lt",
        (BinaryOp::Le, false) | (BinaryOp::Ge, true) => "le",
        (BinaryOp::Gt, false) | (BinaryOp::Lt, true) => "gt",
        (BinaryOp::Ge, false) | (BinaryOp::Le, true) => "ge",
        (BinaryOp::Eq, _) => "eq",
        _ => return None,
    };
    Some(json!({ "of": path, "compare": compare, "value": number }))
}

/// `roll.total`, `roll.value`, `roll.unbounded` or `roll.kept[n]`, printed.
fn roll_path(node: &Resolved<'_>, id: NodeId) -> Option<String> {
    let is_roll = |n: NodeId| matches!(node.node(n), Node::Text("roll"));
    match node.node(id) {
        Node::Field(r, name) if is_roll(*r) && matches!(*name, "total" | "value" | "unbounded") => {
            Some(node.text_at(id))
        }
        Node::Index(base, index) => match (node.node(*base), node.node(*index)) {
            (Node::Field(r, name), Node::Lit(Value::Int(_), _))
                if is_roll(*r) && *name == "kept" =>
            {
                Some(node.text_at(id))
            }
            _ => None,
        },
        _ => None,
    }
}

fn number(node: &Resolved<'_>, id: NodeId) -> Option<Json> {
    match node.node(id) {
        Node::Lit(v @ (Value::Int(_) | Value::Decimal(_)), _) => Some(v.to_json()),
        _ => None,
    }
}
