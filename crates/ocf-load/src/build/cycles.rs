//! Loops between field formulas the build can see without a character: a field whose formula reads
//! a field whose formula reads it back, through any chain (computeSheet's `circular-formula`, found
//! before any sheet is computed). Only the pack's own fields can loop: a dependency never reads its
//! dependents' fields.

use ocf_formula::lowered::Expr;
use ocf_model::RulesDocument;
use rustc_hash::FxHashMap;

/// One loop: the fields of one strongly connected component of the "formula reads" graph, in
/// field order, each field once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    pub fields: Vec<String>,
}

/// Every loop among `rules`' field formulas (in `pack`), each once, ordered by its first field.
/// Formulas that don't parse read nothing here (their syntax error is reported elsewhere).
pub fn field_loops(pack: &str, rules: &RulesDocument) -> Vec<Loop> {
    let ids: Vec<&str> = rules.fields.iter().map(|(id, _)| id).collect();
    let index: FxHashMap<&str, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
    let own = |name: &str| -> Option<usize> {
        let local = match name.split_once(':') {
            Some((p, local)) if p == pack => local,
            Some(_) => return None,
            None => name,
        };
        index.get(local).copied()
    };
    let edges: Vec<Vec<usize>> = rules
        .fields
        .iter()
        .map(|(_, field)| {
            let Some(parsed) = field
                .formula
                .as_ref()
                .map(|f| crate::parsed::parse(f.as_str()))
            else {
                return Vec::new();
            };
            let Ok(formula) = &*parsed else {
                return Vec::new();
            };
            let mut reads: Vec<usize> = formula
                .lowered()
                .exprs
                .iter()
                .filter_map(|(_, expr)| match expr {
                    Expr::Field(name) => own(name),
                    _ => None,
                })
                .collect();
            reads.sort_unstable();
            reads.dedup();
            reads
        })
        .collect();
    let mut loops: Vec<Loop> = strongly_connected(&edges)
        .into_iter()
        .filter(|component| component.len() > 1 || edges[component[0]].contains(&component[0]))
        .map(|mut component| {
            component.sort_unstable();
            Loop {
                fields: component.iter().map(|&i| ids[i].to_owned()).collect(),
            }
        })
        .collect();
    loops.sort_by_key(|l| index[l.fields[0].as_str()]);
    loops
}

/// Tarjan's strongly connected components, iterative (a pack may have thousands of fields in one
/// chain, and recursion that deep would overflow the stack).
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = edges.len();
    let mut order = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut next = 0;
    for start in 0..n {
        if order[start] != UNSEEN {
            continue;
        }
        // (node, index of the next edge to follow)
        let mut calls = vec![(start, 0)];
        order[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (node, ref mut edge)) = calls.last_mut() {
            if let Some(&to) = edges[node].get(*edge) {
                *edge += 1;
                if order[to] == UNSEEN {
                    order[to] = next;
                    low[to] = next;
                    next += 1;
                    stack.push(to);
                    on_stack[to] = true;
                    calls.push((to, 0));
                } else if on_stack[to] {
                    low[node] = low[node].min(order[to]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == order[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loops(yaml: &str) -> Vec<Vec<String>> {
        let rules: RulesDocument = serde_yaml::from_str(yaml).unwrap();
        field_loops("p", &rules)
            .into_iter()
            .map(|l| l.fields)
            .collect()
    }

    #[test]
    fn finds_each_loop_once() {
        let found = loops(
            r#"
fields:
  a: { type: integer, formula: "b + 1" }
  b: { type: integer, formula: "c + a" }
  c: { type: integer, formula: "b" }
  d: { type: integer, formula: "d" }
  e: { type: integer, formula: "a + 1" }
  f: { type: integer, input: true }
  g: { type: integer, formula: "f + f" }
"#,
        );
        assert_eq!(
            found,
            vec![vec!["a", "b", "c"], vec!["d"]]
                .into_iter()
                .map(|l| l.into_iter().map(String::from).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_long_loop_is_found_without_overflowing_the_stack() {
        let mut yaml = String::from("fields:\n");
        for i in 0..20_000 {
            yaml.push_str(&format!(
                "  f{i}: {{ type: integer, formula: \"f{} + 1\" }}\n",
                i + 1
            ));
        }
        yaml.push_str("  f20000: { type: integer, formula: \"f0\" }\n");
        let found = loops(&yaml);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].len(), 20_001);
    }
}
