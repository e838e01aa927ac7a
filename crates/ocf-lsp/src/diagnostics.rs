//! A build problem at its range in the file: the build gives a line and column (the start of the
//! node, or of the place inside a formula); the range runs to the end of the key or scalar there.
//! A formula's type error is placed by ocf-formula's checker inside the formula when its text is
//! as is.

use ocf_formula::Ty;
use ocf_load::build::Problem;

use crate::db::{Diag, Indexed};

/// A field's declared type, by the name a formula reads it by (local or qualified); `None` for a
/// name the pack's files don't declare (a family's fields, a half-typed declaration).
pub type FieldTypes<'a> = dyn Fn(&str) -> Option<Ty> + 'a;

pub fn place(problem: &Problem, text: &str, indexed: &Indexed, fields: &FieldTypes) -> Diag {
    let start = match (problem.line, problem.column) {
        (Some(line), Some(column)) => indexed.lines.offset_of(text, line, column),
        (Some(line), None) => indexed.lines.offset_of(text, line, 1),
        _ => 0,
    };
    let mut range = (start, end_of(start, text, indexed));
    if problem.code == "formula-error"
        && let Some(inside) = inside_formula(problem, start, indexed, fields)
    {
        range = inside;
    }
    // An empty range (a parser error at a line's end) still shows: one character, when there is one.
    if range.1 <= range.0 {
        range.1 = text[range.0.min(text.len())..]
            .chars()
            .next()
            .filter(|c| *c != '\n')
            .map_or(range.0, |c| range.0 + c.len_utf8());
    }
    Diag {
        start: range.0,
        end: range.1,
        error: problem.is_error(),
        code: problem.code.clone(),
        message: problem.message.clone(),
    }
}

/// The end of the key or node that starts at `start`, else of the line.
fn end_of(start: usize, text: &str, indexed: &Indexed) -> usize {
    for node in &indexed.yaml.nodes {
        if let Some((key, _)) = &node.key
            && key.start == start
        {
            return key.end;
        }
        if node.span.start == start && node.kind == crate::yaml::NodeKind::Scalar {
            return node.span.end;
        }
    }
    let line = indexed.lines.position(text, start).line as usize;
    indexed.lines.line_end(text, line).max(start)
}

/// A formula error's range inside its formula: a syntax error starts where the build placed it
/// and runs to the formula's end; a checker error is found again by checking the formula with
/// every root bound: first with the fields it reads of any type (an error that does not depend on
/// their types), then with their declared types (the build's error is the one with its message);
/// one found neither way (it depends on a root's members or on the formula's expected type)
/// covers the formula.
fn inside_formula(
    problem: &Problem,
    start: usize,
    indexed: &Indexed,
    fields: &FieldTypes,
) -> Option<(usize, usize)> {
    let site = indexed
        .symbols
        .formulas
        .iter()
        .find(|f| f.pointer == problem.pointer)?;
    let text_start = site.text_start?;
    let text_end = text_start + site.text.len();
    if start > text_start && start <= text_end {
        return Some((start, text_end));
    }
    let cause = problem.data.get("cause").and_then(|c| c.as_str())?;
    // An unknown field: the read of the field the message names.
    if cause == "unknown-name"
        && let Some(read) = indexed.symbols.refs.iter().find(|r| {
            r.kind == crate::symbols::Kind::Field
                && r.span.start >= text_start
                && r.span.end <= text_end
                && problem.message.contains(&format!("`{}`", r.id))
        })
    {
        return Some((read.span.start, read.span.end));
    }
    let formula = ocf_formula::Formula::parse(&site.text).ok()?;
    let lowered = formula.lowered();
    let reads: Vec<&str> = lowered
        .exprs
        .iter()
        .filter_map(|(_, expr)| match expr {
            ocf_formula::lowered::Expr::Field(name) => Some(&**name),
            _ => None,
        })
        .collect();
    let env = |typed: bool| {
        let mut env = ocf_formula::Env::new()
            .with_sum_fields()
            .with_families()
            .with_copies(Ty::Dyn);
        for root in ocf_formula::Root::ALL {
            env = env.with_root(*root, Ty::Dyn);
        }
        for name in &reads {
            let ty = typed.then(|| fields(name)).flatten().unwrap_or(Ty::Dyn);
            env = env.with_field(name, ty);
        }
        env
    };
    let range = |error: &ocf_formula::FormulaError| {
        let (a, b) = (
            u32::from(error.range.start()) as usize,
            u32::from(error.range.end()) as usize,
        );
        (
            text_start + a,
            text_start + b.max(a + 1).min(site.text.len()),
        )
    };
    if let Err(errors) = ocf_formula::check(lowered, &env(false))
        && let Some(error) = errors.iter().find(|e| e.code.as_str() == cause)
    {
        return Some(range(error));
    }
    // With the fields' declared types, the error must be the build's own: its message ends the
    // problem's (`… at <path>: <message>`).
    if let Err(errors) = ocf_formula::check(lowered, &env(true))
        && let Some(error) = errors.iter().find(|e| {
            e.code.as_str() == cause && problem.message.ends_with(&format!(": {}", e.message))
        })
    {
        return Some(range(error));
    }
    Some((text_start, text_end))
}
