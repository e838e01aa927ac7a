//! What a name under the cursor is, and where the names of a kind are declared and used in a
//! pack and the packs it depends on.

use ocf_formula::lowered::Expr;
use ocf_formula::{Function, Root};

use crate::db::{Pack, SourceFile, file_index};
use crate::symbols::{Decl, Kind};
use crate::world::World;
use crate::yaml::Span;

/// What the cursor is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A declared or referenced name, as written.
    Name {
        kind: Kind,
        id: String,
        span: Span,
    },
    Function {
        function: Function,
        span: Span,
    },
    Root {
        root: Root,
        span: Span,
    },
}

/// A declaration found in the scope, with its file.
#[derive(Debug, Clone)]
pub struct Found {
    pub pack: Pack,
    pub file: SourceFile,
    pub decl: Decl,
}

pub fn target_at(world: &World, file: SourceFile, offset: usize) -> Option<Target> {
    let indexed = file_index(&world.db, file);
    let symbols = &indexed.symbols;
    // The innermost name: a field read inside a formula before the formula's whole node.
    let best = symbols
        .refs
        .iter()
        .filter(|r| r.span.contains(offset))
        .min_by_key(|r| r.span.end - r.span.start);
    if let Some(r) = best {
        if let Some(inner) = in_formula(world, file, offset)
            && matches!(inner, Target::Function { .. } | Target::Root { .. })
        {
            return Some(inner);
        }
        return Some(Target::Name {
            kind: r.kind,
            id: r.id.clone(),
            span: r.span,
        });
    }
    if let Some(d) = symbols.decls.iter().find(|d| d.span.contains(offset)) {
        return Some(Target::Name {
            kind: d.kind,
            id: d.id.clone(),
            span: d.span,
        });
    }
    in_formula(world, file, offset)
}

/// A function or a root under the cursor inside a formula written as is.
fn in_formula(world: &World, file: SourceFile, offset: usize) -> Option<Target> {
    let indexed = file_index(&world.db, file);
    let site = indexed
        .symbols
        .formulas
        .iter()
        .find(|f| f.span.contains(offset))?;
    let at = site.value_offset(offset)?;
    let formula = ocf_formula::Formula::parse(&site.text).ok()?;
    let lowered = formula.lowered();
    let mut best: Option<(usize, Target)> = None;
    for (id, expr) in lowered.exprs.iter() {
        let range = lowered.range(id);
        let (a, b) = (
            u32::from(range.start()) as usize,
            u32::from(range.end()) as usize,
        );
        if at < a || at > b {
            continue;
        }
        let target = match expr {
            Expr::Root(root) => {
                let len = root.as_str().len();
                (at <= a + len).then_some(Target::Root {
                    root: *root,
                    span: site.span_of(a, a + len),
                })
            }
            Expr::Call { function, .. } => {
                let len = function.as_str().len();
                (at <= a + len).then_some(Target::Function {
                    function: *function,
                    span: site.span_of(a, a + len),
                })
            }
            _ => None,
        };
        if let Some(target) = target
            && best.as_ref().is_none_or(|(w, _)| b - a < *w)
        {
            best = Some((b - a, target));
        }
    }
    best.map(|(_, t)| t)
}

/// Whether the formula's byte `at` is inside the condition or expression of a list function
/// (`any`, `all`, `filter`, `map`, `count`), where `x` is each element.
pub fn x_bound_at(text: &str, at: usize) -> bool {
    let Ok(formula) = ocf_formula::Formula::parse(text) else {
        return false;
    };
    let lowered = formula.lowered();
    lowered.exprs.iter().any(|(_, expr)| match expr {
        Expr::Call { function, args }
            if matches!(
                function.as_str(),
                "any" | "all" | "filter" | "map" | "count"
            ) =>
        {
            args.iter().skip(1).any(|arg| {
                let range = lowered.range(*arg);
                let (a, b) = (
                    u32::from(range.start()) as usize,
                    u32::from(range.end()) as usize,
                );
                a <= at && at <= b
            })
        }
        _ => false,
    })
}

/// Splits `pack:local`.
pub fn split(id: &str) -> (Option<&str>, &str) {
    match id.split_once(':') {
        Some((pack, local)) => (Some(pack), local),
        None => (None, id),
    }
}

/// The declarations of `kind` named `id` (as written in `from`): a qualified ID in its pack; a
/// local one in the pack first, then its dependencies.
pub fn declarations(world: &World, from: Pack, kind: Kind, id: &str) -> Vec<Found> {
    let (qualifier, local) = split(id);
    let mut out = Vec::new();
    for pack in world.scope(from) {
        if let Some(q) = qualifier
            && world.pack_id(pack).as_deref() != Some(q)
        {
            continue;
        }
        let decls = crate::db::pack_decls(&world.db, pack);
        for (file, decl) in decls.get(&(kind, local.to_owned())).into_iter().flatten() {
            out.push(Found {
                pack,
                file: *file,
                decl: decl.clone(),
            });
        }
        // A local ID found in the pack hides the same ID in its dependencies.
        if !out.is_empty() {
            break;
        }
    }
    out
}

/// Every use of the declaration: in its pack and in the packs depending on it, each use that
/// resolves to it.
pub fn references(world: &World, target: &Found) -> Vec<(SourceFile, Span)> {
    let mut out = Vec::new();
    for pack in world.dependents(target.pack) {
        for &file in pack.files(&world.db) {
            for r in &file_index(&world.db, file).symbols.refs {
                if r.kind != target.decl.kind || split(&r.id).1 != target.decl.id {
                    continue;
                }
                let resolved = declarations(world, pack, r.kind, &r.id);
                if resolved
                    .iter()
                    .any(|f| f.file == target.file && f.decl.span == target.decl.span)
                {
                    out.push((file, r.span));
                }
            }
        }
    }
    out
}

/// Every declaration of `kind` visible from the pack, the pack's own first: a local ID resolves
/// in the pack, then in its dependencies.
pub fn visible(world: &World, from: Pack, kind: Kind) -> Vec<Found> {
    let mut out = Vec::new();
    for pack in world.scope(from) {
        for &file in pack.files(&world.db) {
            for decl in &file_index(&world.db, file).symbols.decls {
                if decl.kind == kind {
                    out.push(Found {
                        pack,
                        file,
                        decl: decl.clone(),
                    });
                }
            }
        }
    }
    out
}
