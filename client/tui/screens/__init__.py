"""The app's screens: connecting, lobby, table, final scoring, help, and the
small dialogs. Screens pass views down to their widgets and send what the
player does up to the app (as actions or messages); none of them talks to the
network."""
