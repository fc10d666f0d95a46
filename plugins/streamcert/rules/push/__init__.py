"""The rules of profile push (cases/catalogue/push.json): push notification configs and deliveries."""
