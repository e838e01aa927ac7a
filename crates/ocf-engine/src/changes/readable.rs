//! What applyChanges writes, the engine must read again: a character file is read within
//! ocf-load's [`ReadLimits`] (its size, how deep its maps and lists nest), so a change that would
//! make a file past them is refused with `safety-limit-exceeded` and its path, not written for
//! `ocf sheet` to refuse later (decisions.md, issue 36).

use ocf_load::build::ReadLimits;
use serde_json::{Value as Json, json};

use super::batch::ChangeError;

/// Checks a value a change writes as it is (`setExtension`'s `data`) at `depth` containers below
/// the file's root map (`/extensions/<namespace>`: 2): its nesting and its size as JSON text.
pub fn check_value(value: &Json, depth: usize, path: &str) -> Result<(), ChangeError> {
    let limits = ReadLimits::default();
    let nesting = depth + nesting(value);
    if nesting > limits.max_nesting {
        return Err(ChangeError::new(
            "safety-limit-exceeded",
            path,
            format!(
                "the file would nest maps and lists {nesting} deep, more than {}",
                limits.max_nesting
            ),
        )
        .with_data(json!({ "limit": "maxNesting" })));
    }
    let bytes = serde_json::to_vec(value).map_or(0, |v| v.len()) as u64;
    if bytes > limits.max_file_bytes {
        return Err(too_large(path, bytes, &limits));
    }
    Ok(())
}

/// Checks the file a batch made: its size as JSON text and its nesting, once per batch.
pub fn check_file(file: &ocf_model::Character, path: &str) -> Result<(), ChangeError> {
    let limits = ReadLimits::default();
    let value = serde_json::to_value(file).unwrap_or_default();
    let bytes = serde_json::to_vec(&value).map_or(0, |v| v.len()) as u64;
    if bytes > limits.max_file_bytes {
        return Err(too_large(path, bytes, &limits));
    }
    let nesting = nesting(&value);
    if nesting > limits.max_nesting {
        return Err(ChangeError::new(
            "safety-limit-exceeded",
            path,
            format!(
                "the file would nest maps and lists {nesting} deep, more than {}",
                limits.max_nesting
            ),
        )
        .with_data(json!({ "limit": "maxNesting" })));
    }
    Ok(())
}

fn too_large(path: &str, bytes: u64, limits: &ReadLimits) -> ChangeError {
    ChangeError::new(
        "safety-limit-exceeded",
        path,
        format!(
            "the file would be larger than {} bytes ({bytes} bytes of it here)",
            limits.max_file_bytes
        ),
    )
    .with_data(json!({ "limit": "maxFileBytes" }))
}

/// How many maps and lists deep `value` nests (0 for a scalar), without recursion.
fn nesting(value: &Json) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Json>> = match v {
            Json::Array(items) => Box::new(items.iter()),
            Json::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        let depth = depth + 1;
        deepest = deepest.max(depth);
        stack.extend(children.map(|c| (c, depth)));
    }
    deepest
}
