//! The activation walk, grants (EC "Activation", grants): what an activation's content grants,
//! each granted item activated in its place unless an immunity blocks it.

use super::*;

impl<'db> Walk<'db> {
    /// Follows one grant of `granter` (the activation whose `self` and owner the granted content
    /// shares), under `parent` in the activation list.
    pub(super) fn grant(
        &mut self,
        grant: &ocf_model::Grant,
        bindings: Bindings<'db>,
        granter: &Activation,
        parent: Option<usize>,
        tree: &Picks,
        depth: usize,
    ) {
        let scope = grant.scope.unwrap_or(Scope::Holder);
        // Holder content follows holder grants; applied content its `scope: applied` ones.
        if (scope == Scope::Applied) != granter.applied {
            return;
        }
        if !self.condition(grant.when.as_ref(), bindings) {
            return;
        }
        let granted = grant.item.0.clone();
        if self.ruleset.item(&granted).is_none() || self.full() {
            return;
        }
        // A blocked applied grant is not activated, nor what it grants (EC, "Immunities" step 5).
        if granter.applied
            && let Some(entry) = granter.applied_entry
            && self.grant_blocked(entry, &granted)
        {
            return;
        }
        let g = self.push(Activation {
            item: granted.as_str().into(),
            via: if granter.applied {
                Via::Applied
            } else {
                Via::Grant
            },
            applied: granter.applied,
            parent,
            path: None,
            copy: granter.copy,
            applied_entry: granter.applied_entry,
            entry: granter.entry.clone(),
            templates: no_templates(),
            waived: grant.waive_prerequisites.unwrap_or(false),
            kept_by: None,
        });
        self.follow(g, tree, Some(granted.as_str()), depth + 1);
    }

    /// The grants of `content`: its content type's, then its own, each with the pack it is in.
    pub(super) fn grants_of(
        &self,
        content: &'db ContentEntry,
    ) -> Vec<(&'db ocf_model::Grant, &'db str)> {
        let mut grants = Vec::new();
        if let Some(t) = content
            .type_name()
            .and_then(|t| self.ruleset.content_type(t))
        {
            grants.extend(t.decl.grants.iter().map(|g| (g, t.pack.as_str())));
        }
        grants.extend(
            content
                .item
                .grants
                .iter()
                .map(|g| (g, content.pack_of("grants"))),
        );
        grants
    }

    /// Whether content an applied entry's grants reach is blocked (EC, "Immunities" step 5): it
    /// matches an active holder immunity or an immunity of another active candidate, as an entry
    /// whose source it were would (`entry` the granting entry). Each match is reported.
    pub(super) fn grant_blocked(&mut self, entry_index: usize, granted: &str) -> bool {
        let Some(mut immune) = self.immune.take() else {
            return false;
        };
        let entry = &self.character.applied(self.db)[entry_index];
        let matching: Vec<ActiveImmunity<'db>> = immune
            .holder
            .iter()
            .chain(
                immune
                    .active
                    .iter()
                    .filter(|(a, _)| *a != entry_index)
                    .flat_map(|(_, ims)| ims),
            )
            .filter(|im| self.matches(im, granted, entry))
            .cloned()
            .collect();
        let blocked = !matching.is_empty();
        for im in matching {
            immune.reports.push(Report {
                immunity: im,
                order: entry_index,
                entry: entry.id.clone(),
                item: granted.to_owned(),
            });
        }
        self.immune = Some(immune);
        blocked
    }
}
