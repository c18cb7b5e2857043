//! Who may call the API: with a token configured, every request and
//! stream must carry it (`Authorization: Bearer TOKEN`, or `?token=TOKEN`
//! for an `EventSource`, which cannot set headers). Requests that change
//! state must be JSON (`Content-Type: application/json`, which a
//! cross-site form cannot send without a preflight this server never
//! grants) and, when the browser names an `Origin`, come from this host.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::Server;

/// A fresh random token: 32 bytes from the operating system, hex.
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn given_token(request: &Request) -> Option<String> {
    if let Some(value) = request.headers().get(header::AUTHORIZATION)
        && let Ok(value) = value.to_str()
        && let Some(token) = value.strip_prefix("Bearer ")
    {
        return Some(token.trim().to_owned());
    }
    request.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|pair| pair.strip_prefix("token="))
            .map(ToOwned::to_owned)
    })
}

/// The checks, before any route.
pub(crate) async fn guard(
    State(server): State<Arc<Server>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(token) = &server.token
        && !given_token(&request).is_some_and(|given| same(&given, token))
    {
        return ApiError::new(
            axum::http::StatusCode::UNAUTHORIZED,
            "this server needs its token: `Authorization: Bearer TOKEN` or `?token=TOKEN`",
        )
        .into_response();
    }
    // An MCP client ends its session with a bodiless DELETE of `/mcp`: a
    // method a cross-site page cannot send without a preflight this server
    // never grants, so it needs no JSON body.
    let ends_mcp_session = request.method() == Method::DELETE && request.uri().path() == "/mcp";
    if request.method() != Method::GET && request.method() != Method::HEAD && !ends_mcp_session {
        let json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !json {
            return ApiError::new(
                axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "requests that change state must be JSON (Content-Type: application/json)",
            )
            .into_response();
        }
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok());
        if let Some(origin) = request
            .headers()
            .get(header::ORIGIN)
            .and_then(|v| v.to_str().ok())
        {
            let origin_host = origin.split_once("://").map_or(origin, |(_, h)| h);
            if host != Some(origin_host) {
                return ApiError::new(
                    axum::http::StatusCode::FORBIDDEN,
                    format!("cross-site request from `{origin}` refused"),
                )
                .into_response();
            }
        }
    }
    next.run(request).await
}
