//! The standard printer: a formula tree back to canonical text (catalogue §1.10).
//!
//! Canonical text has single spaces around binary operators, `in`, `?` and `:`, none after a
//! prefix operator, `, ` between arguments and list items, no trailing comma, strings in single
//! quotes, numbers and names as written, dice in canonical notation, and parentheses where they were
//! written. Printing is stable: printing the parse of a printed formula gives the same text.

use crate::ast::{self, AstNode, Expr, LiteralKind};
use crate::{Parse, quote_string};

/// The canonical text of a formula, or `None` if it has syntax errors.
pub fn print_formula(parse: &Parse) -> Option<String> {
    if !parse.errors.is_empty() {
        return None;
    }
    parse.root().expr().map(|expr| print(&expr))
}

/// The canonical text of an expression. Meant for trees without errors: a hole prints as nothing.
///
/// This recurses once per level of the tree, which [`crate::parse_with_limits`] bounds.
pub fn print(expr: &Expr) -> String {
    let mut out = String::new();
    write_expr(&mut out, expr);
    out
}

fn write_opt(out: &mut String, expr: Option<Expr>) {
    if let Some(expr) = expr {
        write_expr(out, &expr);
    }
}

fn write_expr(out: &mut String, expr: &Expr) {
    match expr {
        Expr::Literal(lit) => match lit.kind() {
            Some(LiteralKind::Int(text) | LiteralKind::Decimal(text)) => out.push_str(&text),
            Some(LiteralKind::String(value)) => out.push_str(&quote_string(&value)),
            Some(LiteralKind::Bool(b)) => out.push_str(if b { "true" } else { "false" }),
            Some(LiteralKind::Null) => out.push_str("null"),
            None => {}
        },
        Expr::DiceLiteral(dice) => match dice.notation() {
            Some(notation) => out.push_str(&notation.to_string()),
            None => out.push_str(dice.syntax().text().to_string().trim()),
        },
        Expr::ComputedDice(dice) => {
            out.push('(');
            write_opt(out, dice.count());
            out.push(')');
            match (dice.notation(), dice.suffix_token()) {
                (Some(notation), _) => out.push_str(&notation.to_string()),
                (None, Some(token)) => out.push_str(token.text()),
                (None, None) => {}
            }
        }
        Expr::NameRef(name) => out.push_str(&name.text().unwrap_or_default()),
        Expr::FieldExpr(field) => {
            write_opt(out, field.receiver());
            out.push('.');
            if let Some(name) = field.name() {
                out.push_str(name.text());
            }
        }
        Expr::IndexExpr(index) => {
            write_opt(out, index.base());
            out.push('[');
            write_opt(out, index.index());
            out.push(']');
        }
        Expr::CallExpr(call) => {
            write_opt(out, call.callee());
            out.push('(');
            write_list(out, call.args());
            out.push(')');
        }
        Expr::PrefixExpr(prefix) => {
            if let Some(op) = prefix.op_kind() {
                out.push_str(op.as_str());
            }
            write_opt(out, prefix.operand());
        }
        Expr::BinExpr(bin) => {
            write_opt(out, bin.lhs());
            out.push(' ');
            if let Some(op) = bin.op_kind() {
                out.push_str(op.as_str());
            }
            out.push(' ');
            write_opt(out, bin.rhs());
        }
        Expr::TernaryExpr(ternary) => {
            write_opt(out, ternary.condition());
            out.push_str(" ? ");
            write_opt(out, ternary.then_branch());
            out.push_str(" : ");
            write_opt(out, ternary.else_branch());
        }
        Expr::ParenExpr(paren) => {
            out.push('(');
            write_opt(out, paren.expr());
            out.push(')');
        }
        Expr::ListExpr(list) => {
            out.push('[');
            write_list(out, list.items());
            out.push(']');
        }
    }
}

fn write_list(out: &mut String, items: impl Iterator<Item = ast::Expr>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_expr(out, &item);
    }
}
