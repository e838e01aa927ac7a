//! A request's errors: each with a code (the spec's where one applies, else the service's own), a
//! message and a JSON pointer into what the request sent or named. The body is always
//! `{ "errors": [ { code, message, path, ... } ] }`, so an app reads one shape.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub errors: Vec<Value>,
}

impl ApiError {
    /// One error: `code` and `message` at `path` (a JSON pointer; empty for the whole request).
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>, path: &str) -> ApiError {
        ApiError {
            status,
            errors: vec![json!({ "code": code, "message": message.into(), "path": path })],
        }
    }

    /// Adds `data` to the (first) error: what the code names (`revision`, `limit`, ...).
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> ApiError {
        if let Some(Value::Object(first)) = self.errors.first_mut() {
            first
                .entry("data")
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .map(|data| data.insert(key.to_owned(), value.into()));
        }
        self
    }

    /// Puts the (first) error at `path`.
    pub fn at(mut self, path: &str) -> ApiError {
        if let Some(Value::Object(first)) = self.errors.first_mut() {
            first.insert("path".into(), Value::String(path.to_owned()));
        }
        self
    }

    /// Several errors that are the engine's or the reader's own (each already has its code and
    /// path), answered with `status`.
    pub fn many(status: StatusCode, errors: Vec<Value>) -> ApiError {
        ApiError { status, errors }
    }

    pub fn not_found(what: &str, id: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not-found",
            format!("no {what} `{id}`"),
            "",
        )
        .with("id", id)
    }

    pub fn bad_request(code: &str, message: impl Into<String>, path: &str) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message, path)
    }

    /// A write made against a revision that is no longer the stored one.
    pub fn conflict(id: &str, given: u64, current: u64) -> ApiError {
        ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            format!(
                "`{id}` is at revision {current}, and the write was made against revision {given}: \
                 read it again and redo the edit"
            ),
            "/revision",
        )
        .with("revision", current)
        .with("given", given)
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal-error",
            message,
            "",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(json!({ "errors": self.errors }))).into_response()
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(error: crate::store::StoreError) -> ApiError {
        match error {
            crate::store::StoreError::Conflict { id, given, current } => {
                ApiError::conflict(&id, given, current)
            }
            crate::store::StoreError::Exists(id) => ApiError::new(
                StatusCode::CONFLICT,
                "duplicate-id",
                format!("a character `{id}` is stored already"),
                "/id",
            )
            .with("id", id),
            crate::store::StoreError::Backend(message) => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "store-error", message, "")
            }
        }
    }
}
