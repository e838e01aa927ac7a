//! Checks across the pack's content items: IDs declared twice, and `extends` chains that loop
//! (`circular-extends`) or run longer than `maxExtendsDepth`.

use ocf_model::ContentItem;
use rustc_hash::{FxHashMap, FxHashSet};

use super::locations::Locations;
use super::problem::{Position, Problem};

/// A content item where it was read.
pub struct Placed<'a> {
    pub item: &'a ContentItem,
    pub file: &'a str,
    pub locations: &'a Locations,
    /// The item's pointer in its file (`` or `/3`).
    pub pointer: String,
}

impl Placed<'_> {
    fn problem(&self, code: &str, message: String, key: &str) -> Problem {
        let pointer = format!("{}/{key}", self.pointer);
        Problem::error(code, message)
            .in_file(self.file)
            .at(&pointer, self.locations.key(&pointer))
    }

    fn place(&self) -> String {
        let at = self.locations.value(&self.pointer);
        match at {
            Some(at) => format!("{}:{}", self.file, at.line),
            None => self.file.to_owned(),
        }
    }
}

/// An item with neither an `id` nor an `override` (`id: null`, an empty document): loadRuleset
/// refuses it ("a content item needs an `id`"), so the build says it where the item is.
pub fn missing_ids(pack: &str, items: &[Placed<'_>], problems: &mut Vec<Problem>) {
    for placed in items {
        if placed.item.id.is_some() || placed.item.r#override.is_some() {
            continue;
        }
        let message = if placed.locations.has(&placed.pointer) {
            "a content item needs an `id`"
        } else {
            "the document is empty: a content file holds an item or a list of items, each with an `id`"
        };
        let pointer = format!("{}/id", placed.pointer);
        let at = placed
            .locations
            .key(&pointer)
            .or_else(|| placed.locations.value(&placed.pointer))
            // An empty or comment-only file has no node: the document is where the file starts,
            // so `ocf check` still gives a line and column (issue 10: "with file:line:col").
            .or(Some(Position { line: 1, column: 1 }));
        problems.push(
            Problem::error("unknown-reference", message)
                .in_file(placed.file)
                .at(&pointer, at)
                .with("pack", pack),
        );
    }
}

pub fn duplicate_ids(items: &[Placed<'_>], problems: &mut Vec<Problem>) {
    let mut first: FxHashMap<&str, &Placed<'_>> = FxHashMap::default();
    for placed in items {
        let Some(id) = &placed.item.id else { continue };
        match first.get(id.as_str()) {
            Some(earlier) => problems.push(
                placed
                    .problem(
                        "duplicate-id",
                        format!(
                            "the content ID `{id}` is also declared at {}",
                            earlier.place()
                        ),
                        "id",
                    )
                    .with("id", id.as_str())
                    .with("files", vec![earlier.file, placed.file]),
            ),
            None => {
                first.insert(id.as_str(), placed);
            }
        }
    }
}

/// Follows each item's `extends` through the pack's own items (a parent in a dependency ends the
/// chain: the dependency was built on its own). A loop is reported once, at its first item in path
/// order; a chain too long, once, at the item that starts it.
pub fn extends(pack: &str, items: &[Placed<'_>], max_depth: usize, problems: &mut Vec<Problem>) {
    let mut by_id: FxHashMap<&str, usize> = FxHashMap::default();
    for (index, placed) in items.iter().enumerate() {
        if let Some(id) = &placed.item.id {
            by_id.entry(id.as_str()).or_insert(index);
        }
    }
    let parent = |index: usize| -> Option<usize> {
        let extends = items[index].item.extends.as_ref()?.as_str();
        let local = match extends.split_once(':') {
            Some((p, local)) if p == pack => local,
            Some(_) => return None,
            None => extends,
        };
        by_id.get(local).copied()
    };
    // Each item has at most one parent, so each loop is found by walking until a node is seen
    // again: on the current walk it closes a loop; from an earlier walk, the walk joins a known path.
    let mut state = vec![Walk::Unseen; items.len()];
    let mut in_loop = FxHashSet::default();
    for start in 0..items.len() {
        let mut path = Vec::new();
        let mut current = Some(start);
        while let Some(index) = current {
            match state[index] {
                Walk::Done => break,
                Walk::OnPath => {
                    let at = path.iter().position(|&i| i == index).unwrap_or(0);
                    let cycle = &path[at..];
                    in_loop.extend(cycle.iter().copied());
                    report_loop(items, cycle, problems);
                    break;
                }
                Walk::Unseen => {
                    state[index] = Walk::OnPath;
                    path.push(index);
                    current = parent(index);
                }
            }
        }
        for index in path {
            state[index] = Walk::Done;
        }
    }
    let extended: FxHashSet<usize> = (0..items.len()).filter_map(parent).collect();
    for start in (0..items.len()).filter(|i| !extended.contains(i) && !in_loop.contains(i)) {
        let mut depth = 0;
        let mut current = parent(start);
        while let Some(index) = current {
            depth += 1;
            if in_loop.contains(&index) {
                break;
            }
            if depth > max_depth {
                problems.push(
                    items[start]
                        .problem(
                            "safety-limit-exceeded",
                            format!("the `extends` chain is longer than {max_depth}"),
                            "extends",
                        )
                        .with("limit", "maxExtendsDepth"),
                );
                break;
            }
            current = parent(index);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    Unseen,
    OnPath,
    Done,
}

/// A loop, reported at its first item in path order, listing the items from there.
fn report_loop(items: &[Placed<'_>], cycle: &[usize], problems: &mut Vec<Problem>) {
    let Some(first) = cycle.iter().position(|i| Some(i) == cycle.iter().min()) else {
        return;
    };
    let ids: Vec<String> = cycle[first..]
        .iter()
        .chain(&cycle[..first])
        .map(|&i| {
            items[i]
                .item
                .id
                .as_ref()
                .map_or("", |id| id.as_str())
                .to_owned()
        })
        .collect();
    let message = format!("`extends` loops: {} -> {}", ids.join(" -> "), ids[0]);
    problems.push(
        items[cycle[first]]
            .problem("circular-extends", message, "extends")
            .with("items", ids),
    );
}
