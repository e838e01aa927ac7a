//! A formula evaluated in part: every maximal subexpression that doesn't read a given free name
//! (a roll summary's `roll`, EA "The roll summary") becomes its value as a literal, literal guards
//! decide as evaluation would, and the rest stays as written, printed back with the standard
//! printer's spacing.
//!
//! A [`Plan`] is the work that depends on the text alone (the tree walked, each such subexpression
//! lowered), made once per text (a loader makes the plans of the texts it loads); [`Plan::resolve`]
//! is the work of one context: only the planned subexpressions are evaluated.

use std::sync::{Arc, OnceLock};

use ocf_syntax::ast::{AstNode, BinaryOp, Expr, LiteralKind, PrefixOp};

use crate::{Context, Formula, Value};

/// A resolved expression: literals where the context's values were, the rest as written (its
/// texts the plan's own), its nodes in one vector (children by [`NodeId`], the root last made).
#[derive(Debug, Clone)]
pub struct Resolved<'p> {
    nodes: Vec<Node<'p>>,
    root: NodeId,
}

/// A node of a [`Resolved`] expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeId(u32);

/// One node of a resolved expression.
#[derive(Debug, Clone)]
pub enum Node<'p> {
    /// A value known now; `text` keeps a written literal's own spelling.
    Lit(Value, Option<&'p str>),
    /// A subtree left as written (a name, or a subexpression that failed to evaluate).
    Text(&'p str),
    Field(NodeId, &'p str),
    Index(NodeId, NodeId),
    Call(&'p str, Vec<NodeId>),
    List(Vec<NodeId>),
    Dice(NodeId, &'p str),
    Prefix(PrefixOp, NodeId),
    Bin(BinaryOp, NodeId, NodeId),
    Ternary(NodeId, NodeId, NodeId),
    Paren(NodeId),
}

impl<'p> Resolved<'p> {
    /// The whole expression's node.
    pub fn root(&self) -> NodeId {
        self.root
    }

    pub fn node(&self, id: NodeId) -> &Node<'p> {
        &self.nodes[id.0 as usize]
    }

    /// The boolean the whole expression is, when it is a known one.
    pub fn literal_bool(&self) -> Option<bool> {
        self.bool_at(self.root)
    }

    /// The boolean node `id` is, when it is a known one.
    pub fn bool_at(&self, id: NodeId) -> Option<bool> {
        match self.node(id) {
            Node::Lit(Value::Bool(b), _) => Some(*b),
            _ => None,
        }
    }

    /// The whole expression printed.
    pub fn text(&self) -> String {
        self.text_at(self.root)
    }

    /// Node `id` printed with the standard printer's spacing.
    pub fn text_at(&self, id: NodeId) -> String {
        let mut out = String::with_capacity(32);
        self.print(id, &mut out);
        out
    }

    /// Prints node `id` with the standard printer's spacing.
    pub fn print(&self, id: NodeId, out: &mut String) {
        match self.node(id) {
            Node::Lit(_, Some(text)) => out.push_str(text),
            Node::Lit(v, None) => out.push_str(&v.literal().unwrap_or_default()),
            Node::Text(t) => out.push_str(t),
            Node::Field(r, name) => {
                self.print(*r, out);
                out.push('.');
                out.push_str(name);
            }
            Node::Index(b, i) => {
                self.print(*b, out);
                out.push('[');
                self.print(*i, out);
                out.push(']');
            }
            Node::Call(callee, args) => {
                out.push_str(callee);
                out.push('(');
                self.print_list(out, args);
                out.push(')');
            }
            Node::List(items) => {
                out.push('[');
                self.print_list(out, items);
                out.push(']');
            }
            Node::Dice(count, suffix) => {
                out.push('(');
                self.print(*count, out);
                out.push(')');
                out.push_str(suffix);
            }
            Node::Prefix(op, operand) => {
                out.push_str(op.as_str());
                self.print(*operand, out);
            }
            Node::Bin(op, l, r) => {
                self.print(*l, out);
                out.push(' ');
                out.push_str(op.as_str());
                out.push(' ');
                self.print(*r, out);
            }
            Node::Ternary(c, a, b) => {
                self.print(*c, out);
                out.push_str(" ? ");
                self.print(*a, out);
                out.push_str(" : ");
                self.print(*b, out);
            }
            Node::Paren(inner) => {
                out.push('(');
                self.print(*inner, out);
                out.push(')');
            }
        }
    }

    fn print_list(&self, out: &mut String, items: &[NodeId]) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.print(*item, out);
        }
    }
}

/// The nodes of a [`Resolved`] expression as [`Plan::resolve`] makes them.
struct Nodes<'p>(Vec<Node<'p>>);

impl<'p> Nodes<'p> {
    fn push(&mut self, node: Node<'p>) -> NodeId {
        // A plan is a parsed text's tree: far fewer than `u32::MAX` nodes.
        let id = NodeId(u32::try_from(self.0.len()).unwrap_or(u32::MAX));
        self.0.push(node);
        id
    }

    fn bool_at(&self, id: NodeId) -> Option<bool> {
        match &self.0[id.0 as usize] {
            Node::Lit(Value::Bool(b), _) => Some(*b),
            _ => None,
        }
    }

    fn is_operation(&self, id: NodeId) -> bool {
        matches!(
            self.0[id.0 as usize],
            Node::Bin(..) | Node::Ternary(..) | Node::Prefix(..)
        )
    }
}

/// Whether [`Value::literal`] gives `value` a literal: whether no map is in it.
fn has_literal(value: &Value) -> bool {
    match value {
        Value::Map(_) => false,
        Value::List(l) => l.iter().all(has_literal),
        _ => true,
    }
}

/// A formula's shape around a free name: what [`Plan::resolve`] makes of it in a context.
#[derive(Debug)]
pub enum Plan {
    /// A maximal subexpression that doesn't read the free name, lowered (`None`: it doesn't
    /// lower alone) and printed when first needed; with a written literal's own spelling (not a
    /// string's).
    Eval(Printed, Option<Arc<Formula>>, Option<String>),
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
    /// The plan of `text` around the free name `free`; `None` when `text` doesn't parse.
    pub fn of_text(text: &str, free: &str) -> Option<Plan> {
        let parse = ocf_syntax::parse(text);
        if !parse.errors.is_empty() {
            return None;
        }
        let expr = parse.root().expr()?;
        let frees: Vec<ocf_syntax::TextRange> = expr
            .syntax()
            .descendants()
            .filter_map(ocf_syntax::ast::NameRef::cast)
            .filter(|name| name.text().as_deref() == Some(free))
            .map(|name| name.syntax().text_range())
            .collect();
        Some(Plan::of(&expr, &frees))
    }

    /// `expr`'s plan, `frees` the places the whole tree names the free name (found in one walk).
    fn of(expr: &Expr, frees: &[ocf_syntax::TextRange]) -> Plan {
        let range = expr.syntax().text_range();
        if !frees.iter().any(|r| range.contains_range(*r)) {
            let written = match expr {
                Expr::Literal(lit) if !matches!(lit.kind(), Some(LiteralKind::String(_))) => {
                    Some(ocf_syntax::printer::print(expr))
                }
                _ => None,
            };
            let printed = Printed {
                green: expr.syntax().green().into_owned(),
                text: OnceLock::new(),
            };
            let parsed = Formula::of_expr(expr).ok().map(Arc::new);
            return Plan::Eval(printed, parsed, written);
        }
        let sub = |e: Option<Expr>| -> Box<Plan> {
            Box::new(match e {
                Some(e) => Plan::of(&e, frees),
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
                Plan::Call(callee, c.args().map(|a| Plan::of(&a, frees)).collect())
            }
            Expr::ListExpr(l) => Plan::List(l.items().map(|a| Plan::of(&a, frees)).collect()),
            Expr::ComputedDice(d) => {
                let suffix = match (d.notation(), d.suffix_token()) {
                    (Some(n), _) => n.to_string(),
                    (None, Some(t)) => t.text().to_owned(),
                    (None, None) => String::new(),
                };
                Plan::Dice(sub(d.count()), suffix)
            }
            // The free name itself.
            other => Plan::Text(ocf_syntax::printer::print(other)),
        }
    }

    /// The formula resolved in `ctx`: each subexpression that doesn't read the free name its
    /// value as a literal (as written when it fails or has none), literal guards deciding as
    /// evaluation would.
    pub fn resolve(&self, ctx: &dyn Context) -> Resolved<'_> {
        let mut nodes = Nodes(Vec::with_capacity(16));
        let root = self.resolve_in(ctx, &mut nodes);
        Resolved {
            nodes: nodes.0,
            root,
        }
    }

    fn resolve_in<'p>(&'p self, ctx: &dyn Context, nodes: &mut Nodes<'p>) -> NodeId {
        let node = match self {
            Plan::Eval(printed, parsed, written) => {
                match parsed.as_ref().map(|f| f.evaluate(ctx)) {
                    Some(Ok(v)) if has_literal(&v) => Node::Lit(v, written.as_deref()),
                    _ => Node::Text(printed.text()),
                }
            }
            Plan::Text(text) => Node::Text(text),
            Plan::Paren(inner) => {
                let inner = inner.resolve_in(ctx, nodes);
                // Parentheses stay where written, but around a literal or a single operand they
                // hold nothing.
                if !nodes.is_operation(inner) {
                    return inner;
                }
                Node::Paren(inner)
            }
            Plan::Bin(op, l, r) => {
                let (l, r) = (l.resolve_in(ctx, nodes), r.resolve_in(ctx, nodes));
                match (op, nodes.bool_at(l), nodes.bool_at(r)) {
                    (BinaryOp::And, Some(false), _) => Node::Lit(Value::Bool(false), None),
                    (BinaryOp::Or, Some(true), _) => Node::Lit(Value::Bool(true), None),
                    (BinaryOp::And, Some(true), _) | (BinaryOp::Or, Some(false), _) => return r,
                    (BinaryOp::And, _, Some(true)) | (BinaryOp::Or, _, Some(false)) => return l,
                    _ => Node::Bin(*op, l, r),
                }
            }
            Plan::Prefix(op, operand) => {
                let operand = operand.resolve_in(ctx, nodes);
                match (op, nodes.bool_at(operand)) {
                    (PrefixOp::Not, Some(b)) => Node::Lit(Value::Bool(!b), None),
                    (op, _) => Node::Prefix(*op, operand),
                }
            }
            Plan::Ternary(cond, then, otherwise) => {
                let cond = cond.resolve_in(ctx, nodes);
                match nodes.bool_at(cond) {
                    Some(true) => return then.resolve_in(ctx, nodes),
                    Some(false) => return otherwise.resolve_in(ctx, nodes),
                    None => {
                        let then = then.resolve_in(ctx, nodes);
                        let otherwise = otherwise.resolve_in(ctx, nodes);
                        Node::Ternary(cond, then, otherwise)
                    }
                }
            }
            Plan::Field(receiver, name) => Node::Field(receiver.resolve_in(ctx, nodes), name),
            Plan::Index(base, index) => {
                let base = base.resolve_in(ctx, nodes);
                Node::Index(base, index.resolve_in(ctx, nodes))
            }
            Plan::Call(callee, args) => Node::Call(
                callee,
                args.iter().map(|a| a.resolve_in(ctx, nodes)).collect(),
            ),
            Plan::List(items) => {
                Node::List(items.iter().map(|a| a.resolve_in(ctx, nodes)).collect())
            }
            Plan::Dice(count, suffix) => Node::Dice(count.resolve_in(ctx, nodes), suffix),
        };
        nodes.push(node)
    }
}

/// A subexpression's standard printing, made the first time it is needed (a subexpression whose
/// value has no literal, or that fails): most are only evaluated.
#[derive(Debug)]
pub struct Printed {
    green: ocf_syntax::GreenNode,
    text: OnceLock<String>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapContext;

    fn resolved(text: &str, ctx: &serde_json::Value) -> String {
        let ctx = MapContext::from_json(ctx).unwrap();
        Plan::of_text(text, "roll").unwrap().resolve(&ctx).text()
    }

    #[test]
    fn what_does_not_read_the_free_name_becomes_its_value() {
        let ctx = serde_json::json!({ "fields": { "combat.ac": 13, "crit": 19 } });
        assert_eq!(
            resolved("roll.kept[0] == 1 || (roll.total < combat.ac)", &ctx),
            "roll.kept[0] == 1 || (roll.total < 13)"
        );
        assert_eq!(resolved("roll.kept[0] >= crit", &ctx), "roll.kept[0] >= 19");
        // A literal guard decides; a written literal keeps its spelling.
        assert_eq!(resolved("crit > 20 && roll.total >= 2.50", &ctx), "false");
        assert_eq!(
            resolved("crit < 20 && roll.total >= 2.50", &ctx),
            "roll.total >= 2.50"
        );
        // What fails stays as written.
        assert_eq!(
            resolved("roll.total >= nope.x", &ctx),
            "roll.total >= nope.x"
        );
    }

    #[test]
    fn a_text_that_does_not_parse_has_no_plan() {
        assert!(Plan::of_text("roll.total >=", "roll").is_none());
    }
}
