"""The table's widgets. Each renders the frozen view it is given (attributes
down) and holds no game state; what a player does goes up as an action or a
message to the app."""
