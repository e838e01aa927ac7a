//! The module graph of a crate, read from its sources: which module imports which, the cycles
//! between them, and the files too long. CI's measure of ocf-engine's and ocf-actions' structure
//! (issue 46): `cargo test -p ocf-modules` asserts that outside each crate's query map no module
//! imports its way back to itself, that ocf-engine's modules keep to their floors
//! ([`ENGINE_FLOORS`]: the step modules import the map and the floors below, never each other),
//! that loading a character never calls back into a step before ([`LOAD_ORDER`]), and that no
//! file runs past [`MAX_LINES`] without a reason at its top;
//! `cargo run -p ocf-modules -- crates/ocf-engine/src db` prints a crate's graph.
//!
//! A module is a file (`a.rs`, `a/mod.rs`); an import is a path that names another module of the
//! crate, as written in the module's code or `use` trees (`crate::a::b`, `super::c`, a child's
//! name): the edge goes to the deepest module the path names. A name the crate root re-exports
//! (`crate::Database`) counts as its source's module; a name another module re-exports counts as
//! that module, so a query map that re-exports the queries' types is what its users import.
//! Declaring a child (`mod a;`) and re-exporting (`pub use`) are not imports. Code under
//! `#[cfg(test)]` is left out, and so is what macros' bodies hold.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A file longer than this needs a reason written at its top (a line of its first comment
/// saying `over 800 lines`).
pub const MAX_LINES: usize = 800;

/// One module of the graph.
#[derive(Debug, Clone)]
pub struct Module {
    /// `a::b`, empty for the crate root.
    pub name: String,
    pub file: PathBuf,
    pub lines: usize,
    /// Whether its first comment gives a reason for its length.
    pub says_why_long: bool,
}

/// A crate's modules and the imports between them.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub modules: Vec<Module>,
    /// (from, to, the first path seen that made it), by module index.
    pub edges: BTreeMap<(usize, usize), String>,
}

/// A module's parse, kept until every module is known.
struct Parsed {
    file: syn::File,
    /// `pub use` names: name → the path it re-exports, as segments.
    reexports: BTreeMap<String, Vec<String>>,
}

impl Graph {
    /// Reads the crate whose root is `src/lib.rs`.
    pub fn read(src: &Path) -> Result<Graph, String> {
        let mut graph = Graph::default();
        let mut parsed = Vec::new();
        graph.add(
            src.join("lib.rs"),
            String::new(),
            src.to_path_buf(),
            &mut parsed,
        )?;
        let names: BTreeMap<String, usize> = graph
            .modules
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.clone(), i))
            .collect();
        for (from, p) in parsed.iter().enumerate() {
            let mut paths = Paths::default();
            paths.visit_file(&p.file);
            let here = split(&graph.modules[from].name);
            for path in paths.found {
                if let Some(to) = resolve(&here, &path, &names, &parsed)
                    && to != from
                {
                    graph
                        .edges
                        .entry((from, to))
                        .or_insert_with(|| path.join("::"));
                }
            }
        }
        Ok(graph)
    }

    fn add(
        &mut self,
        file: PathBuf,
        name: String,
        children_dir: PathBuf,
        parsed: &mut Vec<Parsed>,
    ) -> Result<(), String> {
        let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let syntax = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let top: Vec<&str> = text.lines().take_while(|l| l.starts_with("//")).collect();
        self.modules.push(Module {
            name: name.clone(),
            file: file.clone(),
            lines: text.lines().count(),
            says_why_long: top.iter().any(|l| {
                l.to_lowercase()
                    .contains(&format!("over {MAX_LINES} lines"))
            }),
        });
        let mut reexports = BTreeMap::new();
        let mut children = Vec::new();
        for item in &syntax.items {
            if is_test(item_attrs(item)) {
                continue;
            }
            match item {
                syn::Item::Mod(m) if m.content.is_none() => children.push(m.ident.to_string()),
                syn::Item::Use(u) if !matches!(u.vis, syn::Visibility::Inherited) => {
                    let mut out = Vec::new();
                    flatten(&u.tree, &mut Vec::new(), &mut out);
                    for (alias, path) in out {
                        reexports.insert(alias, path);
                    }
                }
                _ => {}
            }
        }
        parsed.push(Parsed {
            file: syntax,
            reexports,
        });
        for child in children {
            let full = if name.is_empty() {
                child.clone()
            } else {
                format!("{name}::{child}")
            };
            let flat = children_dir.join(format!("{child}.rs"));
            let nested = children_dir.join(&child).join("mod.rs");
            let (path, dir) = if flat.exists() {
                (flat, children_dir.join(&child))
            } else if nested.exists() {
                (nested, children_dir.join(&child))
            } else {
                return Err(format!("{}: module {child} has no file", file.display()));
            };
            self.add(path, full, dir, parsed)?;
        }
        Ok(())
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.modules.iter().position(|m| m.name == name)
    }

    /// The cycles of the graph with `left_out` (module names; the query map) and every import
    /// into or out of them taken away: each a strongly connected set of two or more modules,
    /// with the imports that tie it.
    pub fn cycles(&self, left_out: &[&str]) -> Vec<Cycle> {
        let out: BTreeSet<usize> = left_out.iter().filter_map(|n| self.index(n)).collect();
        let n = self.modules.len();
        let mut next = vec![Vec::new(); n];
        for &(a, b) in self.edges.keys() {
            if !out.contains(&a) && !out.contains(&b) {
                next[a].push(b);
            }
        }
        strongly_connected(&next)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|set| {
                let members: BTreeSet<usize> = set.iter().copied().collect();
                Cycle {
                    modules: set.iter().map(|&i| self.show(i).to_string()).collect(),
                    imports: self
                        .edges
                        .iter()
                        .filter(|((a, b), _)| members.contains(a) && members.contains(b))
                        .map(|((a, b), path)| {
                            format!("{} -> {} ({path})", self.show(*a), self.show(*b))
                        })
                        .collect(),
                }
            })
            .collect()
    }

    /// The files longer than [`MAX_LINES`] whose top says nothing of why.
    pub fn too_long(&self) -> Vec<String> {
        self.modules
            .iter()
            .filter(|m| m.lines > MAX_LINES && !m.says_why_long)
            .map(|m| format!("{} ({} lines)", m.file.display(), m.lines))
            .collect()
    }

    /// A module's name as printed: `crate` for the root.
    pub fn show(&self, i: usize) -> &str {
        match self.modules[i].name.as_str() {
            "" => "crate",
            name => name,
        }
    }

    /// The modules from the lowest up (each after every module it imports, where no cycle
    /// forbids it), with what each imports.
    pub fn floors(&self, left_out: &[&str]) -> Vec<(String, Vec<String>)> {
        let out: BTreeSet<usize> = left_out.iter().filter_map(|n| self.index(n)).collect();
        let mut done = BTreeSet::new();
        let mut order = Vec::new();
        while done.len() < self.modules.len() {
            let ready: Vec<usize> = (0..self.modules.len())
                .filter(|i| !done.contains(i))
                .filter(|&i| {
                    self.edges.keys().all(|&(a, b)| {
                        a != i || done.contains(&b) || out.contains(&b) || out.contains(&a)
                    })
                })
                .collect();
            let ready = if ready.is_empty() {
                // A cycle: take the first left so that the listing ends.
                vec![
                    (0..self.modules.len())
                        .find(|i| !done.contains(i))
                        .unwrap_or(0),
                ]
            } else {
                ready
            };
            for i in ready {
                done.insert(i);
                let imports = self
                    .edges
                    .keys()
                    .filter(|(a, _)| *a == i)
                    .map(|&(_, b)| self.show(b).to_string())
                    .collect();
                order.push((self.show(i).to_string(), imports));
            }
        }
        order
    }
}

/// A crate's modules by floor, each named by its top-level module (a module's children are on
/// its floor). The rule, from the lowest up: a **base** module (plain data and helpers) imports
/// only base modules; a **shared** module (what every step reads the character through) imports
/// base and shared modules and the map; a **step** module imports base and shared modules and the
/// map, never another step (its own children are itself); the **map** and the **calls** (the
/// calls as wholes and the fronts above them; the crate root is one) import anything. So the map
/// is the only module the steps share above the floors below them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Floors<'a> {
    pub base: &'a [&'a str],
    pub shared: &'a [&'a str],
    pub map: &'a [&'a str],
    pub steps: &'a [&'a str],
    pub calls: &'a [&'a str],
}

/// ocf-engine's floors (decisions.md, "The engine's floors"), the one place they are named: a
/// module added to the crate must be put on one.
pub const ENGINE_FLOORS: Floors<'static> = Floors {
    // Plain data and helpers: the depth guard, the fields an effect can target, stacking groups.
    base: &["depth", "targets", "stacking"],
    // What every step reads the character through: the inputs, the views of the character and
    // the links, a formula's context and its parsing, what a value read, derived characters, the
    // output's shared pieces. They read fields through the map (a formula reads any field).
    shared: &[
        "input", "reads", "formula", "view", "links", "context", "derived", "report",
    ],
    map: &["db"],
    // One per section of the chapter a query implements.
    steps: &[
        "file_check",
        "activation",
        "effects",
        "field",
        "choices",
        "offers",
        "actions",
        "computed",
        "issues",
    ],
    // The calls as wholes and the fronts above them: loading a character (its standard copies run
    // the activation walk on a scratch database), computeSheet's output, applyChanges,
    // listOptions, the long-running session.
    calls: &[
        "load",
        "standard",
        "sheet",
        "sheet_changes",
        "sheet_call",
        "changes",
        "options",
        "option_trials",
        "session",
    ],
};

/// ocf-engine's steps of loading a character, in order (EC "The character as engines see it"):
/// the check of the file, its standard copies, the database's inputs. None imports one before it.
pub const LOAD_ORDER: &[&str] = &["file_check", "standard", "input"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Floor {
    Base,
    Shared,
    Map,
    Step,
    Call,
}

impl Floors<'_> {
    /// The floor of a module and its top-level name.
    fn of<'n>(&self, name: &'n str) -> Option<(Floor, &'n str)> {
        let top = name.split("::").next().unwrap_or("");
        let floor = if top.is_empty() || self.calls.contains(&top) {
            Floor::Call
        } else if self.base.contains(&top) {
            Floor::Base
        } else if self.shared.contains(&top) {
            Floor::Shared
        } else if self.map.contains(&top) {
            Floor::Map
        } else if self.steps.contains(&top) {
            Floor::Step
        } else {
            return None;
        };
        Some((floor, top))
    }
}

impl Graph {
    /// What breaks `floors`' rule: each module on no floor, and each import its floor forbids,
    /// with the path that made it.
    pub fn off_floor(&self, floors: &Floors<'_>) -> Vec<String> {
        let mut out: Vec<String> = self
            .modules
            .iter()
            .filter(|m| floors.of(&m.name).is_none())
            .map(|m| format!("{} is on no floor", m.name))
            .collect();
        for (&(a, b), path) in &self.edges {
            let (Some((from, from_top)), Some((to, to_top))) = (
                floors.of(&self.modules[a].name),
                floors.of(&self.modules[b].name),
            ) else {
                continue;
            };
            let allowed = match from {
                Floor::Base => to == Floor::Base,
                Floor::Shared => matches!(to, Floor::Base | Floor::Shared | Floor::Map),
                Floor::Step => {
                    matches!(to, Floor::Base | Floor::Shared | Floor::Map)
                        || (to == Floor::Step && to_top == from_top)
                }
                Floor::Map | Floor::Call => true,
            };
            if !allowed {
                out.push(format!(
                    "{} ({from:?}) -> {} ({to:?}) ({path})",
                    self.show(a),
                    self.show(b)
                ));
            }
        }
        out
    }
}

impl Graph {
    /// Each import from a module of a step of `order` (top-level names) into a module of a step
    /// before it, with the path that made it.
    pub fn back_imports(&self, order: &[&str]) -> Vec<String> {
        let step = |i: usize| {
            let top = self.modules[i].name.split("::").next().unwrap_or("");
            order.iter().position(|s| *s == top)
        };
        self.edges
            .iter()
            .filter(|((a, b), _)| matches!((step(*a), step(*b)), (Some(x), Some(y)) if y < x))
            .map(|((a, b), path)| format!("{} -> {} ({path})", self.show(*a), self.show(*b)))
            .collect()
    }
}

/// Modules that import each other in a circle, and the imports that tie them.
#[derive(Debug, Clone)]
pub struct Cycle {
    pub modules: Vec<String>,
    pub imports: Vec<String>,
}

fn split(name: &str) -> Vec<String> {
    if name.is_empty() {
        Vec::new()
    } else {
        name.split("::").map(str::to_string).collect()
    }
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Ident>()
                .map(|i| i == "test")
                .unwrap_or(false)
    })
}

/// A `use` tree as (the name it brings in, the whole path).
fn flatten(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            let name = n.ident.to_string();
            if name == "self" {
                let last = path.last().cloned().unwrap_or_default();
                out.push((last, path));
            } else {
                path.push(name.clone());
                out.push((name, path));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.push((r.rename.to_string(), path));
        }
        syn::UseTree::Glob(_) => {
            let mut path = prefix.clone();
            path.push("*".into());
            out.push(("*".into(), path));
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix, out);
            }
        }
    }
}

/// Every path of a file outside `#[cfg(test)]`: `use` trees flattened, and the paths of its
/// code with two or more segments.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if is_test(item_attrs(item)) {
            return;
        }
        if let syn::Item::Use(u) = item {
            if matches!(u.vis, syn::Visibility::Inherited) {
                let mut out = Vec::new();
                flatten(&u.tree, &mut Vec::new(), &mut out);
                self.found.extend(out.into_iter().map(|(_, p)| p));
            }
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() > 1 {
            self.found
                .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }
}

/// The module a path names, seen from module `here`: the deepest module it walks through, after
/// the re-exports of the crate root and of the module it ends in.
fn resolve(
    here: &[String],
    path: &[String],
    names: &BTreeMap<String, usize>,
    parsed: &[Parsed],
) -> Option<usize> {
    let mut at: Vec<String> = here.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) => {
            // A child module's name, or a name this module brought in with `use` (followed
            // through its own edge already): only a child counts here.
            let mut child = at.clone();
            child.push(first.to_string());
            if !names.contains_key(&child.join("::")) {
                return None;
            }
        }
        None => return None,
    }
    // Walk down through modules.
    while let Some(seg) = rest.first() {
        let mut next = at.clone();
        next.push(seg.clone());
        if names.contains_key(&next.join("::")) {
            at = next;
            rest = &rest[1..];
        } else {
            break;
        }
    }
    // A name re-exported where the walk stopped leads on to its source.
    let module = *names.get(&at.join("::"))?;
    let followed = rest
        .first()
        .and_then(|name| parsed[module].reexports.get(name))
        .filter(|_| at.is_empty());
    match followed {
        Some(source) if source.first().map(String::as_str) == Some("crate") => {
            let mut whole: Vec<String> = source[1..].to_vec();
            whole.extend(rest[1..].iter().cloned());
            resolve(&[], &prefixed(whole), names, parsed)
        }
        _ => Some(module),
    }
}

fn prefixed(mut path: Vec<String>) -> Vec<String> {
    path.insert(0, "crate".into());
    path
}

/// Tarjan's strongly connected components.
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.next[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                set.push(w);
                if w == v {
                    break;
                }
            }
            set.sort();
            s.out.push(set);
        }
    }
    let n = next.len();
    let mut s = State {
        next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}
