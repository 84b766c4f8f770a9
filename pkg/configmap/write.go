package configmap

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxAttempts bounds the writes Write retries after a conflict.
const maxAttempts = 5

// Write puts a bundle into the ConfigMap namespace/name, in upstream's
// order: it gets the ConfigMap, then reads the bundle (read), then applies
// it (Apply) and updates the ConfigMap with what it got, so that its
// labels, owner references and other fields are kept.
//
// Two differences from upstream, which fails in both cases: when the
// ConfigMap does not exist, Write creates it (upstream: `configmaps "NAME"
// not found`); when the update meets a conflict (someone changed the
// ConfigMap in between) or the create finds it created in between, Write
// gets it again and retries, up to 5 writes in all.
//
// Nothing is written when the bundle cannot be read.
func Write(ctx context.Context, cms ConfigMaps, namespace, name string, read func() (*Content, error), sourceImage string, log Logger) error {
	if log == nil {
		log = func(string, string, ...string) {}
	}
	cm, create, err := current(ctx, cms, namespace, name)
	if err != nil {
		return err
	}
	if create {
		log("info", fmt.Sprintf("configmap %s/%s not found: creating it", namespace, name))
	}
	c, err := read()
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		Apply(cm, c, sourceImage)
		if create {
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		} else {
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err == nil || attempt == maxAttempts || !(apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) {
			return err
		}
		log("info", fmt.Sprintf("retrying: %v", err))
		if cm, create, err = current(ctx, cms, namespace, name); err != nil {
			return err
		}
	}
}

// current gets the ConfigMap, or a new one to create when there is none.
func current(ctx context.Context, cms ConfigMaps, namespace, name string) (*corev1.ConfigMap, bool, error) {
	cm, err := cms.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return cm, false, nil
}
