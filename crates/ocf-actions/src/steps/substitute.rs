//! The action's values in a passed-on formula (EA "Other steps", changes; DA "The action's values
//! in a passed-on formula"): in a formula a change passes on (`copies.where`, `applied.where`, a
//! `by` or `value` read per copy), each maximal name or member path rooted at `steps`, `flags`,
//! `params` or `action` is evaluated in the action and replaced by its value as a literal, and
//! `has()` of one by `true` or `false`; the rest is kept as written.
//!
//! A path that fails fails the action, unless a guard that is now a literal (`false && …`,
//! `true || …`, `false ? … : …`, `!` of one) skips the operand holding it: then that operand is
//! dropped with the guard, as evaluation would skip it (`has(flags.x) ? item.k == flags.x : true`
//! becomes `true`).

use ocf_formula::Value;
use ocf_syntax::ast::{AstNode, BinaryOp, Expr, PrefixOp};

use crate::context::ActionContext;
use crate::error::ActionError;

const ROOTS: [&str; 4] = ["steps", "flags", "params", "action"];

/// The root name of a path (`action` of `action.item.ammo`), if `expr` is one.
fn path_root(expr: &Expr) -> Option<String> {
    match expr {
        Expr::NameRef(n) => n.text(),
        Expr::FieldExpr(f) => path_root(&f.receiver()?),
        Expr::IndexExpr(i) => path_root(&i.base()?),
        _ => None,
    }
}

fn rooted(expr: &Expr) -> bool {
    path_root(expr).is_some_and(|r| ROOTS.contains(&r.as_str()))
}

/// A path rooted at the action's names, or `has()` of one: replaced by its value whole.
fn unit(expr: &Expr) -> bool {
    if rooted(expr) {
        return true;
    }
    matches!(expr, Expr::CallExpr(call)
        if call.name_ref().and_then(|n| n.text()).as_deref() == Some("has")
            && call.args().next().is_some_and(|a| rooted(&a)))
}

/// A guard that is now a literal: a unit, `!` of one, or one in parentheses, giving a boolean.
fn guard(ctx: &ActionContext<'_>, text: &str, expr: &Expr) -> Option<bool> {
    let literal = match expr {
        Expr::ParenExpr(p) => return guard(ctx, text, &p.expr()?),
        Expr::PrefixExpr(p) if p.op_kind() == Some(PrefixOp::Not) => {
            return guard(ctx, text, &p.operand()?).map(|b| !b);
        }
        e if unit(e) => ctx.eval(slice(text, e)).ok()?,
        _ => return None,
    };
    match literal {
        Value::Bool(b) => Some(b),
        _ => None,
    }
}

fn slice<'t>(text: &'t str, expr: &Expr) -> &'t str {
    let r = expr.syntax().text_range();
    &text[usize::from(r.start())..usize::from(r.end())]
}

/// `expr`'s text with the action's values substituted.
fn render(ctx: &ActionContext<'_>, text: &str, expr: &Expr) -> Result<String, ActionError> {
    if unit(expr) {
        let value = ctx.eval(slice(text, expr))?;
        return crate::run::literal_text(&value);
    }
    match expr {
        Expr::BinExpr(b) if matches!(b.op_kind(), Some(BinaryOp::And | BinaryOp::Or)) => {
            if let (Some(lhs), Some(rhs)) = (b.lhs(), b.rhs()) {
                let skips = match b.op_kind() {
                    Some(BinaryOp::And) => Some(false),
                    _ => Some(true),
                };
                if guard(ctx, text, &lhs) == skips {
                    // Rendered once: a chain of guards stays linear.
                    return match render(ctx, text, &rhs) {
                        Err(_) => Ok(skips.unwrap_or_default().to_string()),
                        Ok(r) => splice(ctx, text, expr, Some((rhs.syntax().text_range(), r))),
                    };
                }
            }
        }
        Expr::TernaryExpr(t) => {
            if let (Some(c), Some(a), Some(b)) = (t.condition(), t.then_branch(), t.else_branch())
                && let Some(taken) = guard(ctx, text, &c)
            {
                let (taken, skipped) = if taken { (a, b) } else { (b, a) };
                return match render(ctx, text, &skipped) {
                    Err(_) => render(ctx, text, &taken),
                    Ok(r) => splice(ctx, text, expr, Some((skipped.syntax().text_range(), r))),
                };
            }
        }
        _ => {}
    }
    splice(ctx, text, expr, None)
}

/// The node's own text, each child expression replaced by its rendering (`done`: one already
/// rendered).
fn splice(
    ctx: &ActionContext<'_>,
    text: &str,
    expr: &Expr,
    done: Option<(ocf_syntax::TextRange, String)>,
) -> Result<String, ActionError> {
    let mut children: Vec<Expr> = expr.syntax().children().filter_map(Expr::cast).collect();
    if let Expr::CallExpr(call) = expr {
        // An argument list isn't an expression: its arguments are the call's children here.
        children.extend(call.args());
    }
    children.sort_by_key(|c| c.syntax().text_range().start());
    let range = expr.syntax().text_range();
    let mut at = usize::from(range.start());
    let mut out = String::new();
    for child in children {
        let r = child.syntax().text_range();
        let (start, end) = (usize::from(r.start()), usize::from(r.end()));
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        match &done {
            Some((range, rendered)) if *range == r => out.push_str(rendered),
            _ => out.push_str(&render(ctx, text, &child)?),
        }
        at = end;
    }
    out.push_str(&text[at..usize::from(range.end())]);
    Ok(out)
}

/// Whether any part of `expr` is replaced.
fn reads_action(expr: &Expr) -> bool {
    unit(expr)
        || expr
            .syntax()
            .descendants()
            .filter_map(Expr::cast)
            .any(|e| unit(&e))
}

/// `text` with the action's values substituted; a formula that reads none of them is returned as
/// written.
pub fn substitute(ctx: &ActionContext<'_>, text: &str) -> Result<String, ActionError> {
    let parse = ocf_syntax::parse(text);
    let Some(expr) = parse.root().expr() else {
        return Ok(text.to_owned());
    };
    if !reads_action(&expr) {
        return Ok(text.to_owned());
    }
    let range = expr.syntax().text_range();
    let (start, end) = (usize::from(range.start()), usize::from(range.end()));
    Ok(format!(
        "{}{}{}",
        &text[..start],
        render(ctx, text, &expr)?,
        &text[end..]
    ))
}
