"""The server on a LAN: announcing itself (:mod:`.discovery`, DNS-SD over
multicast DNS) and serving ``wss://`` (:mod:`.tls`)."""
