"""CLI command modules. Each defines ``register(app: typer.Typer) -> None``; ``graphlink.cli`` finds them."""
