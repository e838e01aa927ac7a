//! The roll summary (EA "The roll summary"): what the roll is rolled against, worked out before
//! any face, in the step's band context. Output only: it never fails the action and a replay never
//! reads it.
//!
//! Each band's `when` (and the set's `value`) is *resolved*: every maximal subexpression that
//! doesn't read `roll` becomes its value as a literal, literal guards decide as evaluation would,
//! and the tree is printed back with the standard printer's spacing. The bands that can't hold
//! any more are left out, the list stops at the first that holds whatever the roll, and a
//! conjunction of plain comparisons of a roll path with a number becomes structured `tests`.

use ocf_formula::Value;
use ocf_syntax::ast::{AstNode, BinaryOp, Expr, LiteralKind, PrefixOp};
use serde_json::{Value as Json, json};

use crate::context::ActionContext;
use crate::run::{Frame, data_json};

pub fn summary(
    ruleset: &ocf_model::Ruleset,
    frame: &Frame<'_>,
    ctx: &ActionContext<'_>,
    bands: Option<&str>,
) -> Json {
    let mut out = serde_json::Map::new();
    if let Some(id) = bands
        && let Some((qualified, set)) = super::classify::band_set(ruleset, frame.pack, id)
    {
        out.insert("bandSet".into(), json!(qualified));
        if let Some(v) = &set.decl.value {
            out.insert("value".into(), json!(resolve_text(ctx, v.as_str()).0));
        }
        let mut list = Vec::new();
        for band in &set.decl.bands {
            let (text, node) = resolve_text(ctx, band.when.as_str());
            match node.as_ref().and_then(Node::literal_bool) {
                // It can't hold: left out.
                Some(false) => continue,
                // It holds whatever the roll: no later band can be reached.
                Some(true) => {
                    list.push(json!({ "band": band.id, "when": text, "tests": [] }));
                    break;
                }
                None => {}
            }
            let mut entry = serde_json::Map::new();
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

/// A resolved expression: literals where the action's values were, the rest as written.
#[derive(Debug, Clone)]
enum Node {
    /// A value known now; `text` keeps a written literal's own spelling.
    Lit(Value, Option<String>),
    /// A subtree left as written (a name, or a subexpression that failed to evaluate).
    Text(String),
    Field(Box<Node>, String),
    Index(Box<Node>, Box<Node>),
    Call(String, Vec<Node>),
    List(Vec<Node>),
    Dice(Box<Node>, String),
    Prefix(PrefixOp, Box<Node>),
    Bin(BinaryOp, Box<Node>, Box<Node>),
    Ternary(Box<Node>, Box<Node>, Box<Node>),
    Paren(Box<Node>),
}

impl Node {
    fn literal_bool(&self) -> Option<bool> {
        match self {
            Node::Lit(Value::Bool(b), _) => Some(*b),
            _ => None,
        }
    }

    fn print(&self, out: &mut String) {
        match self {
            Node::Lit(_, Some(text)) => out.push_str(text),
            Node::Lit(v, None) => out.push_str(&literal(v).unwrap_or_default()),
            Node::Text(t) => out.push_str(t),
            Node::Field(r, name) => {
                r.print(out);
                out.push('.');
                out.push_str(name);
            }
            Node::Index(b, i) => {
                b.print(out);
                out.push('[');
                i.print(out);
                out.push(']');
            }
            Node::Call(callee, args) => {
                out.push_str(callee);
                out.push('(');
                print_list(out, args);
                out.push(')');
            }
            Node::List(items) => {
                out.push('[');
                print_list(out, items);
                out.push(']');
            }
            Node::Dice(count, suffix) => {
                out.push('(');
                count.print(out);
                out.push(')');
                out.push_str(suffix);
            }
            Node::Prefix(op, operand) => {
                out.push_str(op.as_str());
                operand.print(out);
            }
            Node::Bin(op, l, r) => {
                l.print(out);
                out.push(' ');
                out.push_str(op.as_str());
                out.push(' ');
                r.print(out);
            }
            Node::Ternary(c, a, b) => {
                c.print(out);
                out.push_str(" ? ");
                a.print(out);
                out.push_str(" : ");
                b.print(out);
            }
            Node::Paren(inner) => {
                out.push('(');
                inner.print(out);
                out.push(')');
            }
        }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        self.print(&mut out);
        out
    }
}

fn print_list(out: &mut String, items: &[Node]) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        item.print(out);
    }
}

/// Whether [`literal`] gives `value` a literal: whether no map is in it.
fn has_literal(value: &Value) -> bool {
    match value {
        Value::Map(_) => false,
        Value::List(l) => l.iter().all(has_literal),
        _ => true,
    }
}

/// A value's literal, as a passed-on change prints it; a map has none.
fn literal(value: &Value) -> Option<String> {
    crate::run::literal_text(value).ok()
}

/// How a band's condition or a set's `value` resolves, worked out once per text (its syntax tree
/// walked, each maximal subexpression that doesn't read `roll` printed): at each roll only those
/// subexpressions are evaluated. The texts are the rulesets' own, so the table holds what the
/// loaded rulesets write, and past [`MAX_PLANS`] a text is planned again at each read.
fn plan(text: &str) -> Option<std::sync::Arc<Plan>> {
    type Plans = std::collections::HashMap<Box<str>, Option<std::sync::Arc<Plan>>>;
    static PLANS: std::sync::OnceLock<std::sync::Mutex<Plans>> = std::sync::OnceLock::new();
    let plans = PLANS.get_or_init(Default::default);
    if let Some(found) = plans.lock().ok().and_then(|t| t.get(text).cloned()) {
        return found;
    }
    let parse = ocf_syntax::parse(text);
    let planned = parse
        .root()
        .expr()
        .filter(|_| parse.errors.is_empty())
        .map(|expr| std::sync::Arc::new(Plan::of(&expr, &roll_ranges(&expr))));
    if let Ok(mut t) = plans.lock()
        && t.len() < MAX_PLANS
    {
        t.insert(text.into(), planned.clone());
    }
    planned
}

/// How many plans [`plan`] keeps.
const MAX_PLANS: usize = 1 << 14;

/// `text` resolved: its printed form, and the tree when it parsed.
fn resolve_text(ctx: &ActionContext<'_>, text: &str) -> (String, Option<Node>) {
    let Some(plan) = plan(text) else {
        return (text.to_owned(), None);
    };
    let node = plan.resolve(ctx);
    (node.text(), Some(node))
}

/// Where the tree under `expr` names `roll`, found in one walk.
fn roll_ranges(expr: &Expr) -> Vec<ocf_syntax::TextRange> {
    expr.syntax()
        .descendants()
        .filter_map(ocf_syntax::ast::NameRef::cast)
        .filter(|name| name.text().as_deref() == Some("roll"))
        .map(|name| name.syntax().text_range())
        .collect()
}

/// Whether `expr` reads `roll` anywhere: whether one of `rolls` (the whole tree's) is inside it.
fn reads_roll(expr: &Expr, rolls: &[ocf_syntax::TextRange]) -> bool {
    let range = expr.syntax().text_range();
    rolls.iter().any(|r| range.contains_range(*r))
}

/// A condition's shape: what [`Plan::resolve`] makes of it at a roll.
#[derive(Debug)]
enum Plan {
    /// A maximal subexpression that doesn't read `roll`, lowered (`None`: it doesn't lower
    /// alone) and printed when first needed; with a written literal's own spelling (not a
    /// string's).
    Eval(
        Printed,
        Option<std::sync::Arc<ocf_formula::Formula>>,
        Option<String>,
    ),
    Text(String),
    Paren(Box<Plan>),
    Bin(BinaryOp, Box<Plan>, Box<Plan>),
    Prefix(PrefixOp, Box<Plan>),
    Ternary(Box<Plan>, Box<Plan>, Box<Plan>),
    Field(Box<Plan>, String),
    Index(Box<Plan>, Box<Plan>),
    Call(String, Vec<Plan>),
    List(Vec<Plan>),
    Dice(Box<Plan>, String),
}

impl Plan {
    fn of(expr: &Expr, rolls: &[ocf_syntax::TextRange]) -> Plan {
        if !reads_roll(expr, rolls) {
            let written = match expr {
                Expr::Literal(lit) if !matches!(lit.kind(), Some(LiteralKind::String(_))) => {
                    Some(ocf_syntax::printer::print(expr))
                }
                _ => None,
            };
            let printed = Printed {
                green: expr.syntax().green().into_owned(),
                text: std::sync::OnceLock::new(),
            };
            let parsed = ocf_formula::Formula::of_expr(expr)
                .ok()
                .map(std::sync::Arc::new);
            return Plan::Eval(printed, parsed, written);
        }
        let sub = |e: Option<Expr>| -> Box<Plan> {
            Box::new(match e {
                Some(e) => Plan::of(&e, rolls),
                None => Plan::Text(String::new()),
            })
        };
        match expr {
            Expr::ParenExpr(p) => Plan::Paren(sub(p.expr())),
            Expr::BinExpr(b) => match b.op_kind() {
                Some(op) => Plan::Bin(op, sub(b.lhs()), sub(b.rhs())),
                None => Plan::Text(ocf_syntax::printer::print(expr)),
            },
            Expr::PrefixExpr(p) => match p.op_kind() {
                Some(op) => Plan::Prefix(op, sub(p.operand())),
                None => Plan::Text(ocf_syntax::printer::print(expr)),
            },
            Expr::TernaryExpr(t) => Plan::Ternary(
                sub(t.condition()),
                sub(t.then_branch()),
                sub(t.else_branch()),
            ),
            Expr::FieldExpr(f) => Plan::Field(
                sub(f.receiver()),
                f.name().map(|n| n.text().to_owned()).unwrap_or_default(),
            ),
            Expr::IndexExpr(i) => Plan::Index(sub(i.base()), sub(i.index())),
            Expr::CallExpr(c) => {
                let callee = c
                    .callee()
                    .map(|e| ocf_syntax::printer::print(&e))
                    .unwrap_or_default();
                Plan::Call(callee, c.args().map(|a| Plan::of(&a, rolls)).collect())
            }
            Expr::ListExpr(l) => Plan::List(l.items().map(|a| Plan::of(&a, rolls)).collect()),
            Expr::ComputedDice(d) => {
                let suffix = match (d.notation(), d.suffix_token()) {
                    (Some(n), _) => n.to_string(),
                    (None, Some(t)) => t.text().to_owned(),
                    (None, None) => String::new(),
                };
                Plan::Dice(sub(d.count()), suffix)
            }
            // `roll` itself.
            other => Plan::Text(ocf_syntax::printer::print(other)),
        }
    }

    /// The condition resolved in `ctx`: each subexpression that doesn't read `roll` its value as
    /// a literal (as written when it fails or has none), literal guards deciding as evaluation
    /// would.
    fn resolve(&self, ctx: &ActionContext<'_>) -> Node {
        match self {
            Plan::Eval(printed, parsed, written) => {
                match parsed.as_ref().map(|f| f.evaluate(ctx)) {
                    Some(Ok(v)) if has_literal(&v) => Node::Lit(v, written.clone()),
                    _ => Node::Text(printed.text().to_owned()),
                }
            }
            Plan::Text(text) => Node::Text(text.clone()),
            Plan::Paren(inner) => match inner.resolve(ctx) {
                // Parentheses stay where written, but around a literal or a single operand they
                // hold nothing.
                inner @ (Node::Bin(..) | Node::Ternary(..) | Node::Prefix(..)) => {
                    Node::Paren(Box::new(inner))
                }
                inner => inner,
            },
            Plan::Bin(op, l, r) => {
                let (l, r) = (l.resolve(ctx), r.resolve(ctx));
                match (op, l.literal_bool(), r.literal_bool()) {
                    (BinaryOp::And, Some(false), _) => Node::Lit(Value::Bool(false), None),
                    (BinaryOp::Or, Some(true), _) => Node::Lit(Value::Bool(true), None),
                    (BinaryOp::And, Some(true), _) | (BinaryOp::Or, Some(false), _) => r,
                    (BinaryOp::And, _, Some(true)) | (BinaryOp::Or, _, Some(false)) => l,
                    _ => Node::Bin(*op, Box::new(l), Box::new(r)),
                }
            }
            Plan::Prefix(op, operand) => {
                let operand = operand.resolve(ctx);
                match (op, operand.literal_bool()) {
                    (PrefixOp::Not, Some(b)) => Node::Lit(Value::Bool(!b), None),
                    (op, _) => Node::Prefix(*op, Box::new(operand)),
                }
            }
            Plan::Ternary(cond, then, otherwise) => {
                let cond = cond.resolve(ctx);
                match cond.literal_bool() {
                    Some(true) => then.resolve(ctx),
                    Some(false) => otherwise.resolve(ctx),
                    None => Node::Ternary(
                        Box::new(cond),
                        Box::new(then.resolve(ctx)),
                        Box::new(otherwise.resolve(ctx)),
                    ),
                }
            }
            Plan::Field(receiver, name) => {
                Node::Field(Box::new(receiver.resolve(ctx)), name.clone())
            }
            Plan::Index(base, index) => {
                Node::Index(Box::new(base.resolve(ctx)), Box::new(index.resolve(ctx)))
            }
            Plan::Call(callee, args) => Node::Call(
                callee.clone(),
                args.iter().map(|a| a.resolve(ctx)).collect(),
            ),
            Plan::List(items) => Node::List(items.iter().map(|a| a.resolve(ctx)).collect()),
            Plan::Dice(count, suffix) => Node::Dice(Box::new(count.resolve(ctx)), suffix.clone()),
        }
    }
}

/// A subexpression's standard printing, made the first time it is needed (a subexpression whose
/// value has no literal, or that fails): most are only evaluated.
#[derive(Debug)]
struct Printed {
    green: ocf_syntax::GreenNode,
    text: std::sync::OnceLock<String>,
}

impl Printed {
    fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let node = ocf_syntax::SyntaxNode::new_root(self.green.clone());
            Expr::cast(node)
                .map(|e| ocf_syntax::printer::print(&e))
                .unwrap_or_default()
        })
    }
}

/// The structured tests of a resolved condition: a conjunction of comparisons, each between a
/// roll path and a number literal, the roll path on the left. `None` for anything else.
fn tests(node: &Node) -> Option<Vec<Json>> {
    let mut operands = Vec::new();
    conjuncts(node, &mut operands);
    operands.into_iter().map(test).collect()
}

fn conjuncts<'n>(node: &'n Node, out: &mut Vec<&'n Node>) {
    match node {
        Node::Bin(BinaryOp::And, l, r) => {
            conjuncts(l, out);
            conjuncts(r, out);
        }
        Node::Paren(inner) if matches!(**inner, Node::Bin(BinaryOp::And, ..)) => {
            conjuncts(inner, out)
        }
        other => out.push(other),
    }
}

fn test(node: &Node) -> Option<Json> {
    let node = match node {
        Node::Paren(inner) => inner,
        other => other,
    };
    let Node::Bin(op, l, r) = node else {
        return None;
    };
    let (path, number, flipped) = match (roll_path(l), number(r), roll_path(r), number(l)) {
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
fn roll_path(node: &Node) -> Option<String> {
    let is_roll = |n: &Node| matches!(n, Node::Text(t) if t == "roll");
    match node {
        Node::Field(r, name)
            if is_roll(r) && matches!(name.as_str(), "total" | "value" | "unbounded") =>
        {
            Some(node.text())
        }
        Node::Index(base, index) => match (&**base, &**index) {
            (Node::Field(r, name), Node::Lit(Value::Int(_), _)) if is_roll(r) && name == "kept" => {
                Some(node.text())
            }
            _ => None,
        },
        _ => None,
    }
}

fn number(node: &Node) -> Option<Json> {
    match node {
        Node::Lit(v @ (Value::Int(_) | Value::Decimal(_)), _) => Some(v.to_json()),
        _ => None,
    }
}
