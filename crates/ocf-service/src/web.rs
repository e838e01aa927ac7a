//! The web sheet editor: static files kept in the repository and compiled into the binary, so
//! running it needs no build step and no file next to the binary.

use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::app::App;

const INDEX: &str = include_str!("../web/index.html");
const SCRIPT: &str = include_str!("../web/sheet.js");
const STYLE: &str = include_str!("../web/sheet.css");

pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route(
            "/",
            get(|| async { page(INDEX, "text/html; charset=utf-8") }),
        )
        .route(
            "/sheet.js",
            get(|| async { page(SCRIPT, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/sheet.css",
            get(|| async { page(STYLE, "text/css; charset=utf-8") }),
        )
}

fn page(body: &'static str, kind: &'static str) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, kind)], body)
}
