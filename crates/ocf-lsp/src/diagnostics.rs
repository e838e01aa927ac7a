//! A build problem at its range in the file: the build gives a line and column (the start of the
//! node, or of the place inside a formula); the range runs to the end of the key or scalar there.
//! A formula's type error is placed by ocf-formula's checker inside the formula when its text is
//! as is.

use ocf_formula::Ty;
use ocf_load::build::Problem;
use rustc_hash::FxHashMap;

use crate::db::{Diag, Indexed};

/// The most diagnostics published for one file: past it, one more says how many were left out
/// (an editor shows no more usefully, and each costs the client).
pub const MAX_PER_FILE: usize = 1000;

/// Where the key or scalar starting at each offset ends, and each formula by pointer: built once
/// per file so that placing a problem does not scan the file.
pub struct Places<'a> {
    ends: FxHashMap<usize, usize>,
    formulas: FxHashMap<&'a str, &'a crate::symbols::FormulaSite>,
}

impl<'a> Places<'a> {
    pub fn new(indexed: &'a Indexed) -> Places<'a> {
        let mut ends = FxHashMap::default();
        for node in &indexed.yaml.nodes {
            if let Some((key, _)) = &node.key {
                ends.entry(key.start).or_insert(key.end);
            }
            if node.kind == crate::yaml::NodeKind::Scalar {
                ends.entry(node.span.start).or_insert(node.span.end);
            }
        }
        let mut formulas = FxHashMap::default();
        for site in &indexed.symbols.formulas {
            formulas.entry(site.pointer.as_str()).or_insert(site);
        }
        Places { ends, formulas }
    }
}

/// A field's declared type, by the name a formula reads it by (local or qualified); `None` for a
/// name the pack's files don't declare (a family's fields, a half-typed declaration).
pub type FieldTypes<'a> = dyn Fn(&str) -> Option<Ty> + 'a;

pub fn place(
    problem: &Problem,
    text: &str,
    indexed: &Indexed,
    places: &Places<'_>,
    fields: &FieldTypes,
) -> Diag {
    let start = match (problem.line, problem.column) {
        (Some(line), Some(column)) => indexed.lines.offset_of(text, line, column),
        (Some(line), None) => indexed.lines.offset_of(text, line, 1),
        _ => 0,
    };
    let mut range = (start, end_of(start, text, indexed, places));
    if problem.code == "formula-error"
        && let Some(inside) = inside_formula(problem, start, indexed, places, fields)
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
        suggestion: problem
            .data
            .get("suggestion")
            .and_then(|s| s.as_str())
            .map(str::to_owned),
    }
}

/// The end of the key or node that starts at `start`, else of the line.
fn end_of(start: usize, text: &str, indexed: &Indexed, places: &Places<'_>) -> usize {
    if let Some(&end) = places.ends.get(&start) {
        return end;
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
    places: &Places<'_>,
    fields: &FieldTypes,
) -> Option<(usize, usize)> {
    let site = *places.formulas.get(problem.pointer.as_str())?;
    let whole = site.text_span()?;
    let (text_start, text_end) = (whole.start, whole.end);
    let as_is = site.text_start.is_some();
    if as_is && start > text_start && start <= text_end {
        return Some((start, text_end));
    }
    // The build places a syntax error as if the formula were written as is: elsewhere it is
    // found again by parsing the formula.
    if !as_is && let Err(errors) = ocf_formula::Formula::parse(&site.text) {
        let error = errors.first()?;
        let a = u32::from(error.range.start()) as usize;
        let span = site.span_of(a, site.text.len());
        return Some((span.start, span.end));
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
        let span = site.span_of(a, b.max(a + 1).min(site.text.len()));
        (span.start, span.end)
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
