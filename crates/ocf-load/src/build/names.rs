//! What a pack declares, by kind, and how a reference resolves: in the pack, then in its dependencies,
//! nearest first (engine-core "Resolve content"). The build knows a dependency only when it is given
//! one; a name that could be an absent dependency's is left for loadRuleset.

use ocf_model::{ContentItem, RulesDocument};
use rustc_hash::{FxHashMap, FxHashSet};

use super::walk::RefKind;

/// One pack's declarations.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Declarations {
    pub pack: String,
    names: FxHashMap<RefKind, FxHashSet<String>>,
    /// Field ID to whether it is an input field.
    inputs: FxHashMap<String, bool>,
    /// The declared tags and every tag above each.
    tags: FxHashSet<String>,
    /// The bare IDs of the content types' follow-ups: an item's action may offer its type's
    /// follow-up by bare ID, and the walk of an item does not know its type's.
    type_follow_ups: FxHashSet<String>,
}

/// What one document declares, as the pack's declarations take it: a rules file's keyed entries
/// (of which the pack keeps the first file's, as the merge does), its listed IDs and tags, a
/// content file's items. A keystroke that changes no declaration leaves it equal.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Declared {
    /// Keyed sections: field ID and whether it is an input.
    fields: Vec<(String, bool)>,
    /// Content type name, the IDs of its follow-ups and of its inline actions.
    content_types: Vec<(String, Vec<String>, Vec<String>)>,
    /// Other keyed sections, by kind.
    keyed: Vec<(RefKind, String)>,
    /// Listed sections' IDs, by kind (all of them stay in the merged document).
    listed: Vec<(RefKind, String)>,
    tags: Vec<String>,
    /// Content items' IDs, their inline actions' and follow-ups' IDs.
    items: Vec<(String, Vec<String>, Vec<String>)>,
}

impl Declared {
    pub fn rules(rules: &RulesDocument) -> Declared {
        let mut out = Declared {
            fields: rules
                .fields
                .iter()
                .map(|(id, field)| (id.to_owned(), field.input == Some(true)))
                .collect(),
            content_types: rules
                .content_types
                .iter()
                .map(|(name, ty)| {
                    (
                        name.to_owned(),
                        ty.follow_ups.iter().map(|f| f.id.clone()).collect(),
                        inline_actions(&ty.actions),
                    )
                })
                .collect(),
            tags: rules.tags.iter().map(|t| t.as_str().to_owned()).collect(),
            ..Declared::default()
        };
        let keyed = [
            (
                RefKind::BandSet,
                rules.bands.iter().map(|(id, _)| id).collect::<Vec<_>>(),
            ),
            (
                RefKind::Situational,
                rules.situational.iter().map(|(id, _)| id).collect(),
            ),
            (
                RefKind::LinkSlot,
                rules.links.iter().map(|(id, _)| id).collect(),
            ),
        ];
        for (kind, ids) in keyed {
            out.keyed
                .extend(ids.into_iter().map(|id| (kind, id.to_owned())));
        }
        out.listed.extend(
            rules
                .follow_ups
                .iter()
                .map(|f| (RefKind::FollowUp, f.id.clone())),
        );
        out.listed.extend(
            rules
                .actions
                .iter()
                .filter_map(|a| Some((RefKind::Action, a.id.clone()?))),
        );
        out.listed.extend(
            rules
                .creation
                .iter()
                .map(|start| (RefKind::CreationStart, start.id.clone())),
        );
        out
    }

    pub fn content(content: &[ContentItem]) -> Declared {
        let items = content
            .iter()
            .filter_map(|item| {
                let id = item.id.as_ref()?.as_str().to_owned();
                let actions = inline_actions(&item.actions);
                let follow_ups = item.follow_ups.iter().map(|f| f.id.clone()).collect();
                Some((id, actions, follow_ups))
            })
            .collect();
        Declared {
            items,
            ..Declared::default()
        }
    }
}

impl Declarations {
    pub fn of(pack: &str, rules: &RulesDocument, content: &[ContentItem]) -> Declarations {
        Declarations::combine(pack, [&Declared::rules(rules), &Declared::content(content)])
    }

    /// The declarations of a pack whose documents declare `documents`, in path order: a keyed
    /// entry a later rules file declares again is the first file's (the merge keeps it).
    pub fn combine<'a>(
        pack: &str,
        documents: impl IntoIterator<Item = &'a Declared>,
    ) -> Declarations {
        let mut out = Declarations {
            pack: pack.to_owned(),
            ..Declarations::default()
        };
        let mut content_types: FxHashSet<&str> = FxHashSet::default();
        let documents: Vec<&Declared> = documents.into_iter().collect();
        let mut names: FxHashMap<RefKind, FxHashSet<String>> = FxHashMap::default();
        let mut type_follow_ups = FxHashSet::default();
        let mut add = |kind: RefKind, name: &str| {
            names.entry(kind).or_default().insert(name.to_owned());
        };
        for document in &documents {
            for (id, actions, follow_ups) in &document.items {
                add(RefKind::Content, id);
                // Inline actions and follow-ups are named `<item>#<id>` outside the item.
                for action in actions {
                    add(RefKind::Action, &format!("{id}#{action}"));
                    // An action step with `source` names it by its own ID.
                    add(RefKind::UsedAction, action);
                }
                for f in follow_ups {
                    add(RefKind::FollowUp, &format!("{id}#{f}"));
                }
            }
            for (name, follow_ups, actions) in &document.content_types {
                add(RefKind::ContentType, name);
                if !content_types.insert(name) {
                    continue;
                }
                for action in actions {
                    add(RefKind::UsedAction, action);
                }
                for f in follow_ups {
                    add(RefKind::FollowUp, &format!("{name}#{f}"));
                    type_follow_ups.insert(f.clone());
                }
            }
            for (kind, id) in document.keyed.iter().chain(&document.listed) {
                add(*kind, id);
                if *kind == RefKind::Action {
                    add(RefKind::UsedAction, id);
                }
            }
            for (id, _) in &document.fields {
                add(RefKind::Field, id);
            }
        }
        out.names = names;
        out.type_follow_ups = type_follow_ups;
        for document in &documents {
            for (id, input) in &document.fields {
                out.inputs.entry(id.clone()).or_insert(*input);
            }
            for tag in &document.tags {
                let mut tag = tag.as_str();
                loop {
                    out.tags.insert(tag.to_owned());
                    match tag.rfind('.') {
                        Some(dot) => tag = &tag[..dot],
                        None => break,
                    }
                }
            }
        }
        out
    }

    pub fn has(&self, kind: RefKind, name: &str) -> bool {
        self.names
            .get(&kind)
            .is_some_and(|names| names.contains(name))
    }
}

/// The packs a reference may resolve in.
pub struct Scope<'a> {
    pub own: &'a Declarations,
    /// The given dependencies, in the manifest's order (nearest first).
    pub given: Vec<&'a Declarations>,
    /// The declared dependencies that were not given.
    pub missing: Vec<String>,
    /// Every declared dependency's ID.
    pub declared: Vec<String>,
}

/// Where a reference leads.
#[derive(Debug)]
pub enum Resolved<'a> {
    Found(&'a Declarations, String),
    /// Nowhere: the message says why.
    Missing(String),
    /// Possibly in a dependency the build was not given.
    Unknown,
}

impl<'a> Scope<'a> {
    pub fn resolve(&self, kind: RefKind, id: &str) -> Resolved<'a> {
        if let Some((pack, local)) = id.split_once(':') {
            let noun = kind.noun();
            if pack == self.own.pack {
                return self.found_in(self.own, kind, local).unwrap_or_else(|| {
                    Resolved::Missing(format!("`{id}`: {pack} declares no {noun} `{local}`"))
                });
            }
            if let Some(dep) = self.given.iter().find(|d| d.pack == pack) {
                return self.found_in(dep, kind, local).unwrap_or_else(|| {
                    Resolved::Missing(format!("`{id}`: {pack} declares no {noun} `{local}`"))
                });
            }
            if self.declared.iter().any(|d| d == pack) {
                return Resolved::Unknown;
            }
            return Resolved::Missing(format!(
                "`{id}` names the pack `{pack}`, which is not a dependency of {}",
                self.own.pack
            ));
        }
        for pack in std::iter::once(self.own).chain(self.given.iter().copied()) {
            if let Some(found) = self.found_in(pack, kind, id) {
                return found;
            }
        }
        if kind == RefKind::FollowUp
            && let Some(pack) = std::iter::once(self.own)
                .chain(self.given.iter().copied())
                .find(|p| p.type_follow_ups.contains(id))
        {
            return Resolved::Found(pack, id.to_owned());
        }
        if self.missing.is_empty() {
            let mut where_ = self.own.pack.clone();
            if !self.declared.is_empty() {
                where_.push_str(" or its dependencies");
            }
            Resolved::Missing(format!("no {} `{id}` in {where_}", kind.noun()))
        } else {
            Resolved::Unknown
        }
    }

    fn found_in(&self, pack: &'a Declarations, kind: RefKind, local: &str) -> Option<Resolved<'a>> {
        pack.has(kind, local)
            .then(|| Resolved::Found(pack, local.to_owned()))
    }

    /// Whether the field a formula reads is an input field: `None` when the build can't tell.
    pub fn field_is_input(&self, id: &str) -> Option<bool> {
        match self.resolve(RefKind::Field, id) {
            Resolved::Found(pack, local) => pack.inputs.get(&local).copied(),
            _ => None,
        }
    }

    /// Whether `tag` is declared by the pack or a given dependency; `None` when a dependency that
    /// might declare it was not given.
    pub fn declares_tag(&self, tag: &str) -> Option<bool> {
        let declared = std::iter::once(self.own)
            .chain(self.given.iter().copied())
            .any(|pack| pack.tags.contains(tag));
        if declared {
            Some(true)
        } else if self.missing.is_empty() {
            Some(false)
        } else {
            None
        }
    }
}

/// The IDs of a list's inline actions (those with an `id`).
fn inline_actions(actions: &[ocf_model::Action]) -> Vec<String> {
    actions.iter().filter_map(|a| a.id.clone()).collect()
}
