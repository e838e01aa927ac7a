//! The action's values in a passed-on formula (EA "Other steps", changes; DA "The action's values
//! in a passed-on formula"): in a formula a change passes on (`copies.where`, `applied.where`, a
//! `by` or `value` read per copy), each maximal name or member path rooted at `steps`, `flags`,
//! `params` or `action` is evaluated in the action and replaced by its value as a literal, and
//! `has()` of one by `true` or `false`; the rest is kept as written.
//!
//! Dropping an operand a now-literal guard skips (`has(flags.x) ? item.k == flags.x : true`) is
//! left: such a path that fails fails the action.

use ocf_syntax::TextRange;
use ocf_syntax::ast::{AstNode, Expr};

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

fn walk(
    ctx: &ActionContext<'_>,
    text: &str,
    expr: &Expr,
    out: &mut Vec<(TextRange, String)>,
) -> Result<(), ActionError> {
    let range = expr.syntax().text_range();
    let slice = |r: TextRange| text[usize::from(r.start())..usize::from(r.end())].to_owned();
    if rooted(expr) {
        let value = ctx.eval(&slice(range))?;
        out.push((range, super::changes::literal_text(&value)?));
        return Ok(());
    }
    if let Expr::CallExpr(call) = expr
        && call.name_ref().and_then(|n| n.text()).as_deref() == Some("has")
        && call.args().next().is_some_and(|a| rooted(&a))
    {
        let value = ctx.eval(&slice(range))?;
        out.push((range, super::changes::literal_text(&value)?));
        return Ok(());
    }
    for child in expr.syntax().children() {
        // An argument list isn't an expression: a call's arguments are walked below.
        if let Some(e) = Expr::cast(child) {
            walk(ctx, text, &e, out)?;
        }
    }
    if let Expr::CallExpr(call) = expr {
        for arg in call.args() {
            walk(ctx, text, &arg, out)?;
        }
    }
    Ok(())
}

/// `text` with the action's values substituted; a formula that reads none of them is returned as
/// written.
pub fn substitute(ctx: &ActionContext<'_>, text: &str) -> Result<String, ActionError> {
    let parse = ocf_syntax::parse(text);
    let Some(expr) = parse.root().expr() else {
        return Ok(text.to_owned());
    };
    let mut out = Vec::new();
    walk(ctx, text, &expr, &mut out)?;
    if out.is_empty() {
        return Ok(text.to_owned());
    }
    out.sort_by_key(|(r, _)| r.start());
    let mut result = String::new();
    let mut at = 0usize;
    for (range, literal) in out {
        let (start, end) = (usize::from(range.start()), usize::from(range.end()));
        if start < at {
            continue;
        }
        result.push_str(&text[at..start]);
        result.push_str(&literal);
        at = end;
    }
    result.push_str(&text[at..]);
    Ok(result)
}
