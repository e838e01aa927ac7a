//! What a pack declares, by kind, and how a reference resolves: in the pack, then in its dependencies,
//! nearest first (engine-core "Resolve content"). The build knows a dependency only when it is given
//! one; a name that could be an absent dependency's is left for loadRuleset.

use ocf_model::{ContentItem, RulesDocument};
use rustc_hash::{FxHashMap, FxHashSet};

use super::walk::RefKind;

/// One pack's declarations.
#[derive(Debug, Default)]
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

impl Declarations {
    pub fn of(pack: &str, rules: &RulesDocument, content: &[ContentItem]) -> Declarations {
        let mut out = Declarations {
            pack: pack.to_owned(),
            ..Declarations::default()
        };
        let mut add = |kind: RefKind, name: &str| {
            out.names.entry(kind).or_default().insert(name.to_owned());
        };
        for item in content {
            if let Some(id) = &item.id {
                add(RefKind::Content, id.as_str());
                // Inline actions and follow-ups are named `<item>#<id>` outside the item.
                for action in &item.actions {
                    if let Some(action) = &action.id {
                        add(RefKind::Action, &format!("{id}#{action}"));
                    }
                }
                for f in &item.follow_ups {
                    add(RefKind::FollowUp, &format!("{id}#{}", f.id));
                }
            }
        }
        for (name, ty) in rules.content_types.iter() {
            add(RefKind::ContentType, name);
            for f in &ty.follow_ups {
                add(RefKind::FollowUp, &format!("{name}#{}", f.id));
                out.type_follow_ups.insert(f.id.clone());
            }
        }
        for f in &rules.follow_ups {
            add(RefKind::FollowUp, &f.id);
        }
        for (id, _) in rules.fields.iter() {
            add(RefKind::Field, id);
        }
        for action in &rules.actions {
            if let Some(id) = &action.id {
                add(RefKind::Action, id);
            }
        }
        for (id, _) in rules.bands.iter() {
            add(RefKind::BandSet, id);
        }
        for (id, _) in rules.situational.iter() {
            add(RefKind::Situational, id);
        }
        for (id, _) in rules.links.iter() {
            add(RefKind::LinkSlot, id);
        }
        for start in &rules.creation {
            add(RefKind::CreationStart, &start.id);
        }
        for (id, field) in rules.fields.iter() {
            out.inputs.insert(id.to_owned(), field.input == Some(true));
        }
        for tag in &rules.tags {
            let mut tag = tag.as_str();
            loop {
                out.tags.insert(tag.to_owned());
                match tag.rfind('.') {
                    Some(dot) => tag = &tag[..dot],
                    None => break,
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
