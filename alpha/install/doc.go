// Package install answers what OLM v0 installs for a new Subscription.
package install
