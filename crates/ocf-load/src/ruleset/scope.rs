//! Where a pack's names resolve: the pack, then its dependencies nearest first (EC step 3).

use ocf_formula::Ty;
use ocf_model::{PackRelease, Ruleset};

/// The pack, then its dependencies breadth first (nearest first), each once. `homebrew` resolves "in
/// the homebrew, then in each pinned pack and its dependencies, in pin order" (EC, homebrew step 2).
pub fn scope_of(pack: &str, releases: &[PackRelease]) -> Vec<String> {
    let deps = |id: &str| -> Vec<String> {
        releases
            .iter()
            .find(|r| r.id.as_str() == id)
            .map(|r| r.dependencies.iter().map(|(d, _)| d.to_owned()).collect())
            .unwrap_or_default()
    };
    let mut scope = vec![pack.to_owned()];
    if pack == "homebrew" {
        for pin in deps(pack) {
            for id in scope_of(&pin, releases) {
                if !scope.contains(&id) {
                    scope.push(id);
                }
            }
        }
        return scope;
    }
    let mut next = 0;
    while next < scope.len() {
        for dep in deps(&scope[next].clone()) {
            if !scope.contains(&dep) {
                scope.push(dep);
            }
        }
        next += 1;
    }
    scope
}

/// The fields a formula of `pack` may read, with their types: the pack's and its dependencies', by
/// local ID (the nearest pack's wins) and by qualified ID.
pub fn visible_fields(ruleset: &Ruleset, pack: &str) -> Vec<(String, Ty)> {
    let mut out: Vec<(String, Ty)> = Vec::new();
    let Some(loaded) = ruleset.pack(pack) else {
        return out;
    };
    for owner in &loaded.scope {
        for (qualified, field) in ruleset.fields.iter() {
            let Some((p, local)) = qualified.split_once(':') else {
                continue;
            };
            if p != owner {
                continue;
            }
            let ty = crate::formulas::field_ty(field.decl.r#type).unwrap_or(Ty::Dyn);
            if !out.iter().any(|(id, _)| id == local) {
                out.push((local.to_owned(), ty.clone()));
            }
            out.push((qualified.to_owned(), ty));
        }
    }
    out
}
